# poly_dispatch: a loop over a polymorphic list holding ints, floats (never integral: odd
# tenths), strings and small int lists, dispatching on type(v) and accumulating per type
# (sums, counts, string lengths and comparisons, the lists' sums), plus a helper whose result
# type depends on its argument's. Each pass also replaces a few elements with fresh values of
# random types, so the mix keeps changing. Prints the per-type totals of every pass's last
# quarter and a checksum.
import sys

seed = 5555


def rand(n):
    global seed
    seed = (seed * 69069 + 1) % 4294967296
    return (seed // 65536) % n


words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"]


def make_value():
    k = rand(10)
    if k < 4:
        return rand(2001) - 1000
    if k < 7:
        return (2 * rand(2001) - 2001) / 10.0
    if k < 9:
        return words[rand(len(words))]
    return [rand(100) for i in range(1 + rand(5))]


def weight(v):
    t = type(v)
    if t is int:
        return v * 2
    if t is float:
        return v * 0.5
    return len(v)


def dispatch(vals):
    ints = floats = strs = lists = 0
    isum = 0
    fsum = 0.0
    slen = early = lsum = check = 0
    total = 0
    for v in vals:
        t = type(v)
        if t is int:
            ints += 1
            isum += v
            check = (check * 31 + v) % 1000000007
        elif t is float:
            floats += 1
            fsum += v
            if v < 0.0:
                fsum -= 0.25 * v
        elif t is str:
            strs += 1
            slen += len(v)
            if v < "eta":
                early += 1
            if v[0] == "e":
                check = (check * 7 + 1) % 1000000007
        else:
            lists += 1
            for x in v:
                lsum += x
            v[0] = (v[0] + 1) % 100
        total = total + weight(v)
    return [ints, floats, strs, lists, isum, fsum, slen, early, lsum, check, total]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 400000
    passes = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    vals = [make_value() for i in range(n)]
    grand = 0.0
    for p in range(1, passes + 1):
        r = dispatch(vals)
        grand = grand + r[5] + r[10]
        if p % max(1, passes // 4) == 0:
            print("pass", p, "int", r[0], r[4], "float", r[1], "%.3f" % r[5], "str", r[2], r[6], r[7],
                  "list", r[3], r[8], "check", r[9], "total", "%.3f" % r[10])
        for j in range(n // 50):
            vals[(p * 7919 + j * 131) % n] = make_value()
    print("grand", "%.3f" % grand)


main()
