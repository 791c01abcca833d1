# matrix_mixed: dense matrices as lists of row lists whose entries mix ints and floats.
# Multiplies a mixed matrix by itself (each product int*int, int*float or float*float), raises
# an integer matrix to a power modulo 1000 (int only), and solves A x = b by Gaussian
# elimination with partial pivoting (the int entries turn float as rows are reduced).
# Prints the trace, the modular power's checksum, the log-determinant and the solution's sums.
import sys
from math import log


def make_mixed(n):
    m = []
    for i in range(n):
        row = []
        for j in range(n):
            if i == j:
                row.append(2 * n)
            elif (i + j) % 2 == 0:
                row.append((i * 7 + j * 13) % 17 - 8)
            else:
                row.append(((i * 3 + j * 5) % 11) * 0.5 - 2.0)
        m.append(row)
    return m


def matmul(a, b, modulus):
    n = len(a)
    c = []
    for i in range(n):
        row = [0] * n
        ai = a[i]
        for k in range(n):
            aik = ai[k]
            if aik == 0:
                continue
            bk = b[k]
            for j in range(n):
                row[j] = row[j] + aik * bk[j]
        if modulus > 0:
            for j in range(n):
                row[j] = row[j] % modulus
        c.append(row)
    return c


def solve(a, b):
    n = len(a)
    m = []
    for i in range(n):
        m.append(a[i] + [b[i]])
    logdet = 0.0
    sign = 1
    for col in range(n):
        piv = col
        for r in range(col + 1, n):
            if abs(m[r][col]) > abs(m[piv][col]):
                piv = r
        if piv != col:
            m[piv], m[col] = m[col], m[piv]
            sign = -sign
        p = m[col][col]
        if p < 0:
            sign = -sign
        logdet += log(abs(p))
        for r in range(col + 1, n):
            f = m[r][col] / p
            if f == 0.0:
                continue
            mr = m[r]
            mc = m[col]
            for j in range(col, n + 1):
                mr[j] = mr[j] - f * mc[j]
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        s = m[i][n]
        for j in range(i + 1, n):
            s = s - m[i][j] * x[j]
        x[i] = s / m[i][i]
    return x, logdet, sign


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 280
    m = make_mixed(n)
    sq = matmul(m, m, 0)
    tr = 0
    for i in range(n):
        tr = tr + sq[i][i]
    print("trace", "%.4f" % tr)

    im = []
    for i in range(n):
        im.append([(i * j + i + 2 * j + 1) % 10 for j in range(n)])
    p = im
    for k in range(3):
        p = matmul(p, im, 1000)
    check = 0
    for i in range(n):
        for j in range(n):
            check = (check * 31 + p[i][j]) % 1000000007
    print("power checksum", check)

    b = [i % 5 - 2 for i in range(n)]
    x, logdet, sign = solve(m, b)
    sx = 0.0
    sax = 0.0
    for i in range(n):
        sx += x[i]
        sax += abs(x[i])
    worst = 0.0
    for i in range(n):
        r = -b[i]
        for j in range(n):
            r = r + m[i][j] * x[j]
        worst = max(worst, abs(r))
    print("logdet", "%.6f" % logdet, "sign", sign)
    print("sum x", "%.9f" % sx, "sum |x|", "%.9f" % sax, "residual small", "true" if worst < 1e-9 else "false")


main()
