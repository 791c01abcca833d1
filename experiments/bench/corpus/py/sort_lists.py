# sort_lists: hand-written sorts on lists. Quicksort (median of three, insertion sort below 12
# elements, recursion on the smaller side and a loop on the larger), top-down merge sort with a
# scratch list, both on ints and on floats, and a stable merge sort of [key, id] records checked
# for stability. Prints checksums of the sorted data and the comparisons counted.
import sys
from math import floor

seed = 4242
comparisons = 0


def rand(n):
    global seed
    seed = seed * 48271 % 2147483647
    return seed % n


def insertion(xs, lo, hi):
    global comparisons
    for i in range(lo + 1, hi + 1):
        v = xs[i]
        j = i - 1
        while j >= lo and xs[j] > v:
            xs[j + 1] = xs[j]
            j -= 1
            comparisons += 1
        xs[j + 1] = v


def quicksort(xs, lo, hi):
    global comparisons
    while hi - lo > 11:
        mid = (lo + hi) // 2
        if xs[mid] < xs[lo]:
            xs[mid], xs[lo] = xs[lo], xs[mid]
        if xs[hi] < xs[lo]:
            xs[hi], xs[lo] = xs[lo], xs[hi]
        if xs[hi] < xs[mid]:
            xs[hi], xs[mid] = xs[mid], xs[hi]
        pivot = xs[mid]
        i = lo
        j = hi
        while i <= j:
            while xs[i] < pivot:
                i += 1
                comparisons += 1
            while xs[j] > pivot:
                j -= 1
                comparisons += 1
            if i <= j:
                xs[i], xs[j] = xs[j], xs[i]
                i += 1
                j -= 1
        if j - lo < hi - i:
            quicksort(xs, lo, j)
            lo = i
        else:
            quicksort(xs, i, hi)
            hi = j
    insertion(xs, lo, hi)


def merge_sort(xs, tmp, lo, hi, key):
    global comparisons
    if hi - lo < 1:
        return
    mid = (lo + hi) // 2
    merge_sort(xs, tmp, lo, mid, key)
    merge_sort(xs, tmp, mid + 1, hi, key)
    i = lo
    j = mid + 1
    k = lo
    while i <= mid and j <= hi:
        comparisons += 1
        if key:
            take_left = xs[i][0] <= xs[j][0]
        else:
            take_left = xs[i] <= xs[j]
        if take_left:
            tmp[k] = xs[i]
            i += 1
        else:
            tmp[k] = xs[j]
            j += 1
        k += 1
    while i <= mid:
        tmp[k] = xs[i]
        i += 1
        k += 1
    while j <= hi:
        tmp[k] = xs[j]
        j += 1
        k += 1
    for t in range(lo, hi + 1):
        xs[t] = tmp[t]


def checksum(xs):
    h = 0
    for i in range(len(xs)):
        assert i == 0 or xs[i - 1] <= xs[i], "not sorted"
        h = (h * 31 + floor(xs[i] * 8)) % 1000000007
    return h


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    ints = []
    floats = []
    for i in range(n):
        ints.append(rand(1000000))
        floats.append(rand(100000) / 8.0 - 5000.0)
    q1 = ints + []
    quicksort(q1, 0, n - 1)
    m1 = ints + []
    merge_sort(m1, [0] * n, 0, n - 1, False)
    print("ints", checksum(q1), checksum(m1), "min", q1[0], "max", q1[n - 1])
    q2 = floats + []
    quicksort(q2, 0, n - 1)
    m2 = floats + []
    merge_sort(m2, [0] * n, 0, n - 1, False)
    print("floats", checksum(q2), checksum(m2), "median", "%.3f" % q2[n // 2])
    recs = []
    for i in range(n):
        recs.append([rand(100), i])
    merge_sort(recs, [None] * n, 0, n - 1, True)
    stable = True
    for i in range(1, n):
        if recs[i - 1][0] == recs[i][0] and recs[i - 1][1] > recs[i][1]:
            stable = False
    print("records stable", "true" if stable else "false", "first", recs[0], "last", recs[n - 1])
    print("comparisons", comparisons)


main()
