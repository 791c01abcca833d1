-- bank_sim: a bank and inventory simulation over arrays of records. Accounts are
-- {id, owner, balance in cents, transactions, rejections, frozen}; a generated stream of
-- deposits, withdrawals and transfers updates them (rejections cost a fee, three rejections
-- freeze an account until a deposit brings it above 50.00), monthly interest is rounded to
-- cents, and a shop's stock records {sku, qty, price, sold} serve orders and restock below a
-- threshold. Prints the ledger summary. Record fields are at index+1 of the other twins.
local floor = math.floor
local OWNERS = {"ada", "bob", "cy", "dee", "eve", "fay", "gus", "hal"}
local seed = 1234

local function rand(n)
  seed = seed * 48271 % 2147483647
  return seed % n
end

local function open_accounts(n)
  local accts = {}
  for i = 0, n - 1 do
    accts[i + 1] = {i, OWNERS[i % #OWNERS + 1] .. string.format("%d", i), 10000 + rand(90000), 0, 0, false}
  end
  return accts
end

local function withdraw(acct, cents)
  if acct[6] then return false end
  if acct[3] < cents then
    acct[5] = acct[5] + 1
    acct[3] = acct[3] - 250
    if acct[5] >= 3 then acct[6] = true end
    return false
  end
  acct[3] = acct[3] - cents
  acct[4] = acct[4] + 1
  return true
end

local function deposit(acct, cents)
  acct[3] = acct[3] + cents
  acct[4] = acct[4] + 1
  if acct[6] and acct[3] > 5000 then acct[6] = false; acct[5] = 0 end
end

local function add_interest(accts, yearly)
  local paid = 0
  for i = 1, #accts do
    local acct = accts[i]
    if acct[3] > 0 and not acct[6] then
      local cents = floor(acct[3] * yearly / 12.0 + 0.5)
      acct[3] = acct[3] + cents
      paid = paid + cents
    end
  end
  return paid
end

local function serve_order(stock, sku, qty)
  local item = stock[sku + 1]
  if item[2] < qty then return 0 end
  item[2] = item[2] - qty
  item[4] = item[4] + qty
  if item[2] < 20 then item[2] = item[2] + 100 end
  return qty * item[3]
end

local steps = tonumber(arg and arg[1]) or 5000000
local accts = open_accounts(500)
local stock = {}
for s = 0, 39 do stock[s + 1] = {s, 50 + rand(50), 99 + rand(5000), 0} end
local rejected, transfers, revenue, interest = 0, 0, 0, 0
for t = 0, steps - 1 do
  local kind = rand(10)
  local acct = accts[rand(#accts) + 1]
  if kind < 4 then
    deposit(acct, 100 + rand(30000))
  elseif kind < 6 then
    if not withdraw(acct, 100 + rand(30000)) then rejected = rejected + 1 end
  elseif kind < 8 then
    local other = accts[rand(#accts) + 1]
    local amount = 500 + rand(10000)
    if other[1] ~= acct[1] and not other[6] and withdraw(acct, amount) then
      deposit(other, amount)
      transfers = transfers + 1
    end
  else
    local cents = serve_order(stock, rand(#stock), 1 + rand(5))
    if cents > 0 and withdraw(acct, cents) then revenue = revenue + cents else rejected = rejected + 1 end
  end
  if t % 20000 == 19999 then interest = interest + add_interest(accts, 0.035) end
end
local total, frozen = 0, 0
local richest = accts[1]
for i = 1, #accts do
  local acct = accts[i]
  total = total + acct[3]
  if acct[6] then frozen = frozen + 1 end
  if acct[3] > richest[3] or (acct[3] == richest[3] and acct[2] < richest[2]) then richest = acct end
end
local sold = 0
for i = 1, #stock do sold = sold + stock[i][4] end
print(string.format("balances %d frozen %d rejected %d transfers %d", total, frozen, rejected, transfers))
print(string.format("revenue %d interest %d units sold %d", revenue, interest, sold))
print(string.format("richest %s %.2f", richest[2], richest[3] / 100.0))
