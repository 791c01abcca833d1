# prefix_sums: scans and a 1-D convolution over float lists. Each round takes an LCG-seeded
# signal, builds its inclusive prefix sums, answers random range-sum queries from them (and
# checks a few against direct sums), runs a running-maximum scan and an exponential moving
# average, convolves the signal with a 15-tap smoothing kernel, compares the kernel's box
# cousin with the moving average the prefix sums give, and feeds the smoothed signal back in.
# Prints each quarter's sums; then the checks.
import sys

seed = 16180


def rand(n):
    global seed
    seed = (seed * 69069 + 1) % 4294967296
    return (seed // 65536) % n


def prefix(x, p):
    s = 0.0
    p[0] = 0.0
    for i in range(len(x)):
        s += x[i]
        p[i + 1] = s


def convolve(x, k, y):
    taps = len(k)
    for i in range(len(y)):
        s = 0.0
        for t in range(taps):
            s += k[t] * x[i + t]
        y[i] = s


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 80
    taps = 15
    kernel = []
    ksum = 0.0
    for t in range(taps):
        d = t - taps // 2
        if d < 0:
            d = -d
        v = 1.0 / (1.0 + 0.25 * d * d)
        kernel.append(v)
        ksum += v
    for t in range(taps):
        kernel[t] = kernel[t] / ksum
    box = [1.0 / taps] * taps
    x = [0.0] * n
    level = 0.0
    for i in range(n):
        level = level * 0.95 + (rand(2001) - 1000) / 200.0
        x[i] = level
    p = [0.0] * (n + 1)
    y = [0.0] * (n - taps + 1)
    yb = [0.0] * (n - taps + 1)
    ema = [0.0] * n
    checked = 0
    worst = 0.0
    worst_box = 0.0
    grand = 0.0
    for r in range(1, rounds + 1):
        prefix(x, p)
        qsum = 0.0
        for q in range(n):
            i = rand(n)
            j = rand(n)
            if i > j:
                i, j = j, i
            s = p[j + 1] - p[i]
            qsum += s
            if q % 2000 == 0:
                direct = 0.0
                for m in range(i, j + 1):
                    direct += x[m]
                d = direct - s
                if d < 0.0:
                    d = -d
                if d > worst:
                    worst = d
                checked += 1
        runmax = x[0]
        maxsum = 0.0
        e = 0.0
        for i in range(n):
            if x[i] > runmax:
                runmax = x[i]
            maxsum += runmax
            e = 0.9 * e + 0.1 * x[i]
            ema[i] = e
        convolve(x, kernel, y)
        convolve(x, box, yb)
        for i in range(len(yb)):
            d = yb[i] - (p[i + taps] - p[i]) / taps
            if d < 0.0:
                d = -d
            if d > worst_box:
                worst_box = d
        ysum = 0.0
        for v in y:
            ysum += v
        grand += qsum + ysum
        if r % max(1, rounds // 4) == 0:
            print("round", r, "total", "%.6f" % p[n], "queries", "%.4f" % qsum, "runmax", "%.4f" % maxsum,
                  "ema", "%.6f" % ema[n - 1], "smooth", "%.6f" % ysum)
        for i in range(len(y)):
            x[i] = 0.5 * x[i] + 0.5 * y[i] + (rand(201) - 100) / 400.0
    print("checked", checked, "range sums agree", "true" if worst < 1e-6 else "false",
          "box agrees", "true" if worst_box < 1e-6 else "false")
    print("grand", "%.4f" % grand)


main()
