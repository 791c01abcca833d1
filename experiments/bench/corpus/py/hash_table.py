# hash_table: an open-addressing hash table built from three parallel lists (state, keys,
# values) with linear probing, tombstones and doubling when the load passes 0.6. String keys are
# hashed character by character (digits via int(), letters via an alphabet scan). Counts word
# occurrences, deletes and re-inserts keys, and prints sizes, probe counts and checksums.
import sys

ALPHA = "abcdefghijklmnopqrstuvwxyz"
probes = 0


def char_code(c):
    if "0" <= c <= "9":
        return 1 + int(c)
    for i in range(26):
        if ALPHA[i] == c:
            return 11 + i
    return 40


def hash_str(s):
    h = 5381
    for i in range(len(s)):
        h = (h * 33 + char_code(s[i])) % 4294967296
    return h


def new_table(cap):
    return [0, 0, [0] * cap, [None] * cap, [0] * cap]  # size, used, state, keys, vals


def slot_of(t, key):
    global probes
    state = t[2]
    keys = t[3]
    cap = len(state)
    i = hash_str(key) % cap
    tomb = -1
    while True:
        probes += 1
        st = state[i]
        if st == 0:
            if tomb >= 0:
                return tomb
            return i
        if st == 2:
            if tomb < 0:
                tomb = i
        elif keys[i] == key:
            return i
        i = (i + 1) % cap


def resize(t):
    old_state = t[2]
    old_keys = t[3]
    old_vals = t[4]
    cap = len(old_state) * 2
    t[0] = 0
    t[1] = 0
    t[2] = [0] * cap
    t[3] = [None] * cap
    t[4] = [0] * cap
    for i in range(len(old_state)):
        if old_state[i] == 1:
            put(t, old_keys[i], old_vals[i])


def put(t, key, val):
    i = slot_of(t, key)
    if t[2][i] != 1:
        if t[2][i] == 0:
            t[1] += 1
        t[2][i] = 1
        t[3][i] = key
        t[0] += 1
    t[4][i] = val
    if t[1] * 10 > len(t[2]) * 6:
        resize(t)


def get(t, key, default):
    i = slot_of(t, key)
    if t[2][i] == 1:
        return t[4][i]
    return default


def remove(t, key):
    i = slot_of(t, key)
    if t[2][i] != 1:
        return False
    t[2][i] = 2
    t[3][i] = None
    t[0] -= 1
    return True


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 60000
    t = new_table(16)
    x = 11
    for i in range(n):
        x = x * 48271 % 2147483647
        key = "w" + str(x % (n // 3))
        put(t, key, get(t, key, 0) + 1)
    print("distinct", t[0], "capacity", len(t[2]))
    removed = 0
    for k in range(0, n // 3, 3):
        if remove(t, "w" + str(k)):
            removed += 1
    print("removed", removed, "size", t[0])
    total = 0
    hits = 0
    for k in range(n // 3):
        v = get(t, "w" + str(k), -1)
        if v >= 0:
            hits += 1
            total += v * (k % 7 + 1)
    for k in range(0, n // 3, 6):
        put(t, "w" + str(k), k)
    check = 0
    for i in range(len(t[2])):
        if t[2][i] == 1:
            check = (check + hash_str(t[3][i]) % 1000 * t[4][i]) % 1000000007
    print("hits", hits, "weighted", total, "size", t[0], "capacity", len(t[2]))
    print("probes", probes, "checksum", check)


main()
