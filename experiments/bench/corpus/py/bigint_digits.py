# bigint_digits: big-integer arithmetic on little-endian lists of base-10000 limbs (Python's own
# big ints are not used). Computes N! by repeated small multiplication, Fibonacci(4N) by repeated
# addition, the square of N! by schoolbook multiplication, and compares magnitudes; converts to
# decimal strings (zero-padded limbs) and prints digit counts, digit sums and the leading and
# trailing digits.
import sys

BASE = 10000


def from_int(v):
    limbs = []
    while v > 0:
        limbs.append(v % BASE)
        v = v // BASE
    if len(limbs) == 0:
        limbs.append(0)
    return limbs


def mul_small(a, m):
    out = []
    carry = 0
    for limb in a:
        t = limb * m + carry
        out.append(t % BASE)
        carry = t // BASE
    while carry > 0:
        out.append(carry % BASE)
        carry = carry // BASE
    return out


def add(a, b):
    out = []
    carry = 0
    n = max(len(a), len(b))
    for i in range(n):
        t = carry
        if i < len(a):
            t += a[i]
        if i < len(b):
            t += b[i]
        if t >= BASE:
            out.append(t - BASE)
            carry = 1
        else:
            out.append(t)
            carry = 0
    if carry > 0:
        out.append(carry)
    return out


def mul(a, b):
    out = [0] * (len(a) + len(b))
    for i in range(len(a)):
        ai = a[i]
        if ai == 0:
            continue
        carry = 0
        for j in range(len(b)):
            t = out[i + j] + ai * b[j] + carry
            out[i + j] = t % BASE
            carry = t // BASE
        k = i + len(b)
        while carry > 0:
            t = out[k] + carry
            out[k] = t % BASE
            carry = t // BASE
            k += 1
    while len(out) > 1 and out[len(out) - 1] == 0:
        out.pop()
    return out


def compare(a, b):
    if len(a) != len(b):
        return -1 if len(a) < len(b) else 1
    for i in range(len(a) - 1, -1, -1):
        if a[i] != b[i]:
            return -1 if a[i] < b[i] else 1
    return 0


def to_string(a):
    s = str(a[len(a) - 1])
    for i in range(len(a) - 2, -1, -1):
        part = str(a[i])
        while len(part) < 4:
            part = "0" + part
        s = s + part
    return s


def describe(name, a):
    s = to_string(a)
    dsum = 0
    for i in range(len(s)):
        dsum += int(s[i])
    head = s[:min(12, len(s))]
    tail = s[max(0, len(s) - 12):]
    print(name, "digits", len(s), "digit sum", dsum, "head", head, "tail", tail)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2500
    fact = from_int(1)
    for k in range(2, n + 1):
        fact = mul_small(fact, k)
    describe("factorial", fact)
    f0 = from_int(0)
    f1 = from_int(1)
    for k in range(4 * n - 1):
        f0, f1 = f1, add(f0, f1)
    describe("fibonacci", f1)
    sq = mul(fact, fact)
    describe("factorial squared", sq)
    print("compare fib vs fact", compare(f1, fact), "fact^2 vs fact", compare(sq, fact), "self",
          compare(fact, mul_small(fact, 1)))


main()
