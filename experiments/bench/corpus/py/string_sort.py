# string_sort: string comparison and sorting. Generates N words from syllables with random
# capitals and digits, sorts them bytewise with a bottom-up merge sort, then walks the sorted
# list: distinct words, the longest common prefix of neighbours (character by character),
# binary searches for probe words, and a case-insensitive ordering check of a sample.
import sys

SYL = ["an", "be", "ce", "do", "el", "fa", "go", "hi", "in", "jo", "ka", "lu", "ma", "ne", "o", "pa"]
LOWER = "abcdefghijklmnopqrstuvwxyz"
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
seed = 1


def rand(n):
    global seed
    seed = seed * 48271 % 2147483647
    return seed % n


def make_word():
    w = ""
    for k in range(1 + rand(4)):
        w = w + SYL[rand(len(SYL))]
    if rand(5) == 0:
        w = UPPER[rand(26)] + w
    if rand(7) == 0:
        w = w + str(rand(100))
    return w


def lower(s):
    out = ""
    for i in range(len(s)):
        c = s[i]
        if "A" <= c <= "Z":
            k = 0
            while UPPER[k] != c:
                k += 1
            c = LOWER[k]
        out = out + c
    return out


def merge_sort(xs):
    n = len(xs)
    src = xs
    dst = [""] * n
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            for k in range(lo, hi):
                if i < mid and (j >= hi or src[i] <= src[j]):
                    dst[k] = src[i]
                    i += 1
                else:
                    dst[k] = src[j]
                    j += 1
            lo = hi
        src, dst = dst, src
        width *= 2
    return src


def common_prefix(a, b):
    n = min(len(a), len(b))
    k = 0
    while k < n and a[k] == b[k]:
        k += 1
    return k


def search(xs, w):
    lo = 0
    hi = len(xs)
    while lo < hi:
        mid = (lo + hi) // 2
        if xs[mid] < w:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(xs) and xs[lo] == w


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    words = [make_word() for i in range(n)]
    srt = merge_sort(words)
    distinct = 1
    lcp_total = 0
    lcp_max = 0
    for i in range(1, n):
        assert srt[i - 1] <= srt[i]
        if srt[i] != srt[i - 1]:
            distinct += 1
        p = common_prefix(srt[i - 1], srt[i])
        lcp_total += p
        if p > lcp_max:
            lcp_max = p
    print("words", n, "distinct", distinct, "lcp total", lcp_total, "lcp max", lcp_max)
    print("first", srt[0], srt[1], srt[2], "last", srt[n - 1])
    found = 0
    for q in range(n // 4):
        if search(srt, make_word()):
            found += 1
    print("probes found", found, "of", n // 4)
    sample = [lower(srt[i]) for i in range(0, n, 97)]
    folded = merge_sort(sample)
    moved = 0
    for i in range(len(sample)):
        if folded[i] != sample[i]:
            moved += 1
    print("case-folded sample", len(sample), "moved", moved, "first", folded[0])


main()
