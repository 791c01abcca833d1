# bank_sim: a bank and inventory simulation over lists of records. Accounts are
# [id, owner, balance in cents, transactions, rejections, frozen]; a generated stream of
# deposits, withdrawals and transfers updates them (rejections cost a fee, three rejections
# freeze an account until a deposit brings it above 50.00), monthly interest is rounded to
# cents, and a shop's stock records [sku, qty, price, sold] serve orders and restock below a
# threshold. Prints the ledger summary.
import sys
from math import floor

OWNERS = ["ada", "bob", "cy", "dee", "eve", "fay", "gus", "hal"]
seed = 1234


def rand(n):
    global seed
    seed = seed * 48271 % 2147483647
    return seed % n


def open_accounts(n):
    accts = []
    for i in range(n):
        accts.append([i, OWNERS[i % len(OWNERS)] + str(i), 10000 + rand(90000), 0, 0, False])
    return accts


def withdraw(acct, cents):
    if acct[5]:
        return False
    if acct[2] < cents:
        acct[4] += 1
        acct[2] -= 250
        if acct[4] >= 3:
            acct[5] = True
        return False
    acct[2] -= cents
    acct[3] += 1
    return True


def deposit(acct, cents):
    acct[2] += cents
    acct[3] += 1
    if acct[5] and acct[2] > 5000:
        acct[5] = False
        acct[4] = 0


def add_interest(accts, yearly):
    paid = 0
    for acct in accts:
        if acct[2] > 0 and not acct[5]:
            cents = floor(acct[2] * yearly / 12.0 + 0.5)
            acct[2] += cents
            paid += cents
    return paid


def serve_order(stock, sku, qty):
    item = stock[sku]
    if item[1] < qty:
        return 0
    item[1] -= qty
    item[3] += qty
    if item[1] < 20:
        item[1] += 100
    return qty * item[2]


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5000000
    accts = open_accounts(500)
    stock = []
    for s in range(40):
        stock.append([s, 50 + rand(50), 99 + rand(5000), 0])
    rejected = 0
    transfers = 0
    revenue = 0
    interest = 0
    for t in range(steps):
        kind = rand(10)
        acct = accts[rand(len(accts))]
        if kind < 4:
            deposit(acct, 100 + rand(30000))
        elif kind < 6:
            if not withdraw(acct, 100 + rand(30000)):
                rejected += 1
        elif kind < 8:
            other = accts[rand(len(accts))]
            amount = 500 + rand(10000)
            if other[0] != acct[0] and not other[5] and withdraw(acct, amount):
                deposit(other, amount)
                transfers += 1
        else:
            cents = serve_order(stock, rand(len(stock)), 1 + rand(5))
            if cents > 0 and withdraw(acct, cents):
                revenue += cents
            else:
                rejected += 1
        if t % 20000 == 19999:
            interest += add_interest(accts, 0.035)
    total = 0
    frozen = 0
    richest = accts[0]
    for acct in accts:
        total += acct[2]
        if acct[5]:
            frozen += 1
        if acct[2] > richest[2] or (acct[2] == richest[2] and acct[1] < richest[1]):
            richest = acct
    sold = 0
    for item in stock:
        sold += item[3]
    print("balances", total, "frozen", frozen, "rejected", rejected, "transfers", transfers)
    print("revenue", revenue, "interest", interest, "units sold", sold)
    print("richest", richest[1], "%.2f" % (richest[2] / 100.0))


main()
