# rle: run-length encoding and decoding. Generates strings made of runs (LCG run lengths over a
# small alphabet), encodes them as "<count><char>" text and as a list of [count, char] pairs,
# decodes the text back by scanning digits, checks the round trip, and compresses bitmap rows
# of 0/1 ints into run lists that are intersected run by run. Prints sizes and checksums.
import sys

ALPHA = "abcxyz."
seed = 55


def rand(n):
    global seed
    seed = seed * 48271 % 2147483647
    return seed % n


def gen_runs(nruns):
    s = ""
    prev = ""
    for r in range(nruns):
        c = ALPHA[rand(len(ALPHA))]
        while c == prev:
            c = ALPHA[rand(len(ALPHA))]
        prev = c
        k = 1 + rand(4)
        if rand(6) == 0:
            k += rand(30)
        for i in range(k):
            s = s + c
    return s


def encode(s):
    out = ""
    pairs = []
    i = 0
    while i < len(s):
        j = i + 1
        while j < len(s) and s[j] == s[i]:
            j += 1
        out = out + str(j - i) + s[i]
        pairs.append([j - i, s[i]])
        i = j
    return out, pairs


def decode(code):
    out = ""
    count = 0
    for i in range(len(code)):
        c = code[i]
        if "0" <= c <= "9":
            count = count * 10 + int(c)
        else:
            for k in range(count):
                out = out + c
            count = 0
    return out


def row_runs(row):
    runs = []
    start = -1
    for i in range(len(row)):
        if row[i] == 1 and start < 0:
            start = i
        if row[i] == 0 and start >= 0:
            runs.append([start, i])
            start = -1
    if start >= 0:
        runs.append([start, len(row)])
    return runs


def intersect(a, b):
    out = []
    i = 0
    j = 0
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if lo < hi:
            out.append([lo, hi])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 6000
    raw = 0
    coded = 0
    longest = 0
    check = 0
    for t in range(n):
        s = gen_runs(20 + rand(20))
        code, pairs = encode(s)
        assert decode(code) == s, "round trip failed"
        raw += len(s)
        coded += len(code)
        for p in pairs:
            if p[0] > longest:
                longest = p[0]
        check = (check * 31 + len(code) * len(pairs)) % 1000000007
        if t == 0:
            print(code)
    print("strings", n, "raw", raw, "encoded", coded, "longest run", longest, "checksum", check)
    width = 200
    overlap = 0
    runs_total = 0
    for r in range(n // 4):
        row1 = [0] * width
        row2 = [0] * width
        for i in range(width):
            if (i // (3 + r % 7)) % 2 == 0:
                row1[i] = 1
            if rand(3) != 0:
                row2[i] = 1
        inter = intersect(row_runs(row1), row_runs(row2))
        runs_total += len(inter)
        for run in inter:
            overlap += run[1] - run[0]
    print("bitmap rows", n // 4, "intersection runs", runs_total, "overlap pixels", overlap)


main()
