# nqueens: backtracking search that recurses from inside a loop. Counts all placements of n
# non-attacking queens for n = 4..N with column and diagonal occupancy lists, records the first
# solution found for each n as a string of column letters, and counts the nodes visited; then
# recounts the largest n using the mirror symmetry (first queen in the left half only).
import sys

LETTERS = "abcdefghijklmnopqrstuvwxyz"
nodes = 0
first = ""


def solve(row, n, width, cols, d1, d2, placed):
    global nodes, first
    if row == n:
        if first == "":
            s = ""
            for r in range(n):
                s = s + LETTERS[placed[r]]
            first = s
        return 1
    count = 0
    for c in range(width):
        if cols[c] or d1[row + c] or d2[row - c + n - 1]:
            continue
        nodes += 1
        cols[c] = True
        d1[row + c] = True
        d2[row - c + n - 1] = True
        placed[row] = c
        count += solve(row + 1, n, n, cols, d1, d2, placed)
        cols[c] = False
        d1[row + c] = False
        d2[row - c + n - 1] = False
    return count


def queens(n, width):
    global first
    first = ""
    cols = [False] * n
    d1 = [False] * (2 * n - 1)
    d2 = [False] * (2 * n - 1)
    return solve(0, n, width, cols, d1, d2, [-1] * n)


def main():
    maxn = int(sys.argv[1]) if len(sys.argv) > 1 else 13
    total = 0
    for n in range(4, maxn + 1):
        c = queens(n, n)
        total += c
        print("n", n, "solutions", c, "first", first)
    half = queens(maxn, maxn // 2)
    sym = 2 * half
    if maxn % 2 == 1:
        cols = [False] * maxn
        d1 = [False] * (2 * maxn - 1)
        d2 = [False] * (2 * maxn - 1)
        mid = maxn // 2
        cols[mid] = True
        d1[mid] = True
        d2[maxn - 1 - mid] = True
        placed = [-1] * maxn
        placed[0] = mid
        sym += solve(1, maxn, maxn, cols, d1, d2, placed)
    print("symmetric recount", maxn, sym)
    print("total", total, "nodes", nodes)


main()
