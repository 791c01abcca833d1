# polynomial: polynomials as coefficient lists (lowest degree first) that mix int and float
# coefficients. Builds a polynomial from integer and fractional roots by repeated multiplication,
# evaluates with Horner's rule at int and float points, differentiates, integrates with
# Simpson's rule on N intervals, finds the roots again with Newton's method plus deflation by
# synthetic division, evaluates Chebyshev polynomials by their recurrence, and checks an
# all-int polynomial at integer points.
import sys


def poly_mul(p, q):
    out = [0] * (len(p) + len(q) - 1)
    for i in range(len(p)):
        for j in range(len(q)):
            out[i + j] = out[i + j] + p[i] * q[j]
    return out


def horner(p, x):
    acc = 0
    for i in range(len(p) - 1, -1, -1):
        acc = acc * x + p[i]
    return acc


def derivative(p):
    return [p[i] * i for i in range(1, len(p))]


def deflate(p, r):
    n = len(p) - 1
    out = [0] * n
    carry = p[n]
    for i in range(n - 1, -1, -1):
        out[i] = carry
        carry = p[i] + carry * r
    return out


def newton(p, x0):
    d = derivative(p)
    x = x0
    for it in range(100):
        step = horner(p, x) / horner(d, x)
        x = x - step
        if abs(step) < 1e-13:
            return x, it + 1
    return x, 100


def simpson(p, lo, hi, n):
    h = (hi - lo) / n
    s = horner(p, lo) + horner(p, hi)
    for i in range(1, n):
        w = 2
        if i % 2 == 1:
            w = 4
        s = s + w * horner(p, lo + i * h)
    return s * h / 3


def chebyshev_sum(n, x):
    t0 = 1
    t1 = x
    s = t0 + t1
    for k in range(2, n):
        t2 = 2 * x * t1 - t0
        s = s + t2
        t0 = t1
        t1 = t2
    return s


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000000
    roots = [1, -2, 0.5, 3, -1.5, 2.25, -3]
    p = [1]
    for r in roots:
        p = poly_mul(p, [-r, 1])
    print("coefficients" + "".join(" %.4f" % c for c in p))
    isum = 0
    for x in range(-5, 6):
        isum = isum + horner(p, x)
    print("sum over integer points", "%.4f" % isum, "p(0.1)", "%.9f" % horner(p, 0.1))
    print("integral [-3, 3.25]", "%.6f" % simpson(p, -3, 3.25, n - n % 2))
    q = p
    found = []
    iters = 0
    for k in range(len(roots)):
        x, it = newton(q, 4.5 - 1.3 * k)
        iters += it
        r = newton(p, x)[0]
        found.append(r)
        q = deflate(q, r)
    print("roots" + "".join(" %.9f" % r for r in found), "iterations", iters)
    csum = 0.0
    for i in range(n // 50):
        csum += chebyshev_sum(40, -1 + 2.0 * i / (n // 50))
    print("chebyshev", "%.6f" % csum, "int T", chebyshev_sum(12, 3))
    ip = [1]
    for r in [1, -2, 3, -1, 2]:
        ip = poly_mul(ip, [-r, 1])
    di = derivative(ip)
    icheck = 0
    sign_changes = 0
    prev = horner(ip, -400)
    for x in range(-400, 400):
        v = horner(ip, x)
        icheck = (icheck * 7 + v + horner(di, x)) % 1000000007
        if (v < 0) != (prev < 0):
            sign_changes += 1
        prev = v
    print("int polynomial", ip, "checksum", icheck, "sign changes", sign_changes)


main()
