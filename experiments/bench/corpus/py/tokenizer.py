# tokenizer: generates N lines of pseudo-source text from syllables, numbers and punctuation
# (LCG-driven), scans each line character by character into identifier, number and
# punctuation tokens, rebuilds a normalised line (single spaces, capitalised identifiers) with
# a string builder, and prints token counts, the number sum, extreme identifiers and a checksum.
import sys

SYL = ["ka", "to", "ri", "mu", "sen", "da", "lo", "qui", "ne", "bar", "zu", "ex"]
PUNCT = [",", ".", ";", "(", ")", "=", "+", "*"]
LOWER = "abcdefghijklmnopqrstuvwxyz"
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
seed = 12345


def rand(n):
    global seed
    seed = (seed * 69069 + 1) % 4294967296
    return (seed // 65536) % n


def gen_line():
    s = ""
    pieces = 6 + rand(10)
    for p in range(pieces):
        r = rand(10)
        if r < 6:
            w = ""
            for k in range(1 + rand(3)):
                w = w + SYL[rand(len(SYL))]
            s = s + w
        elif r < 8:
            s = s + str(rand(5000))
        else:
            s = s + PUNCT[rand(len(PUNCT))]
        if rand(4) != 0:
            s = s + " "
        if rand(9) == 0:
            s = s + "  "
    return s


def capital(c):
    for i in range(26):
        if LOWER[i] == c:
            return UPPER[i]
    return c


counts = [0, 0, 0]
numsum = 0
longest = ""
smallest = "~"
largest = ""


def tokenize(line):
    global numsum, longest, smallest, largest
    out = ""
    i = 0
    n = len(line)
    while i < n:
        c = line[i]
        if c == " ":
            i += 1
            continue
        if len(out) > 0:
            out = out + " "
        if "a" <= c <= "z":
            word = c
            i += 1
            while i < n and "a" <= line[i] <= "z":
                word = word + line[i]
                i += 1
            counts[0] += 1
            if len(word) > len(longest):
                longest = word
            if word < smallest:
                smallest = word
            if word > largest:
                largest = word
            out = out + capital(word[0])
            for k in range(1, len(word)):
                out = out + word[k]
        elif "0" <= c <= "9":
            v = 0
            while i < n and "0" <= line[i] <= "9":
                v = (v * 10 + int(line[i])) % 1000000007
                out = out + line[i]
                i += 1
            counts[1] += 1
            numsum = (numsum + v) % 1000000007
        else:
            counts[2] += 1
            out = out + c
            i += 1
    return out


def main():
    nlines = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    check = 0
    chars = 0
    for ln in range(nlines):
        line = gen_line()
        chars += len(line)
        norm = tokenize(line)
        check = (check * 31 + len(norm) * (ln + 1)) % 1000000007
        if ln == 0:
            print("first:", norm)
    print("lines", nlines, "chars", chars)
    print("idents", counts[0], "numbers", counts[1], "punct", counts[2], "numsum", numsum)
    print("longest", longest, "smallest", smallest, "largest", largest)
    print("checksum", check)


main()
