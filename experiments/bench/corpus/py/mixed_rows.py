# mixed_rows: rows of numbers that hold ints and floats mixed. A weight row mixes int weights
# (1, 2, 3) with float ones; a count row starts as int zeros and receives events: every fourth
# event adds the int 1 to its bin, the others add the bin's weight, so a bin stays an int until
# a float weight lands on it. After each round the bins above a cap are halved with floor()
# (turning them back into ints), and a scoring pass multiplies counts by weights (int * int,
# int * float, float * float) and sums neighbour differences. Prints, per quarter of the
# rounds, the number of integral bins, the folded bins and the row's sums; then a checksum.
import sys
from math import floor

seed = 777


def rand(n):
    global seed
    seed = (seed * 69069 + 1) % 4294967296
    return (seed // 65536) % n


def make_weights(nb):
    w = []
    for b in range(nb):
        k = rand(5)
        if k < 3:
            w.append(k + 1)
        else:
            w.append(0.35 + 0.1 * rand(8))
    return w


def events(counts, weights, nb, m):
    global seed
    x = seed
    for e in range(m):
        x = (x * 69069 + 12345) % 4294967296
        b = (x // 65536) % nb
        if e % 4 == 0:
            counts[b] = counts[b] + 1
        else:
            counts[b] = counts[b] + weights[b]
    seed = x


def fold(counts, nb, cap):
    folded = 0
    for b in range(nb):
        c = counts[b]
        if c > cap:
            counts[b] = floor(c / 2)
            folded += 1
    return folded


def score(counts, weights, nb):
    s = 0
    rough = 0.0
    for b in range(nb):
        s = s + counts[b] * weights[b]
    for b in range(1, nb):
        d = counts[b] - counts[b - 1]
        if d < 0:
            d = -d
        rough = rough + d
    return s, rough


def integral(counts, nb):
    k = 0
    for b in range(nb):
        if counts[b] == floor(counts[b]):
            k += 1
    return k


def main():
    nb = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 600
    weights = make_weights(nb)
    counts = [0] * nb
    per_round = nb * 20
    cap = 400
    folded = 0
    total = 0.0
    for r in range(1, rounds + 1):
        events(counts, weights, nb, per_round)
        s, rough = score(counts, weights, nb)
        total = total + s
        folded += fold(counts, nb, cap)
        if r % max(1, rounds // 4) == 0:
            print("round", r, "integral", integral(counts, nb), "folded", folded, "score", "%.4f" % s,
                  "roughness", "%.4f" % rough)
    check = 0
    for b in range(nb):
        check = (check * 131 + floor(counts[b] * 8)) % 1000000007
    print("total", "%.4f" % total, "checksum", check)


main()
