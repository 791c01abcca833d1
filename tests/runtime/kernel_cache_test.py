#!/usr/bin/env python3
"""The persistent kernel cache, end to end (docs/tensor-jit.md, "Kernel cache").

Runs a program with fused kernels four times against one fresh cache
directory ($TESSERA_CACHE_DIR) and reads `--stats`:
  1. an empty cache: kernels are compiled and written;
  2. the same program again: no kernel is compiled, all are linked from the cache;
  3. every entry damaged (bytes flipped in the middle): each is found corrupt,
     ignored and rebuilt, and the program prints the same;
  4. again: nothing compiled (the rebuilt entries are whole).
And with --jit-param kcache=0 nothing is read or written.
Usage: kernel_cache_test.py --vm build/tessera-vm
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "programs", "fused_loop.tsb")
COMPILES = re.compile(r"kernel compiles: (\d+) in [\d.]+ ms \(median [\d.]+ ms\), (\d+) linked from the cache")
CACHE = re.compile(r"kernel cache (\S+): hits (\d+), misses (\d+), corrupt (\d+), writes (\d+)")


def run(vm, cache_dir, *extra):
    env = dict(os.environ, TESSERA_CACHE_DIR=cache_dir)
    p = subprocess.run([vm, "run", PROGRAM, "--stats", "--jit-param", "async=0", *extra],
                       capture_output=True, text=True, env=env, timeout=120)
    if p.returncode != 0:
        sys.exit(f"FAIL: exit status {p.returncode}\n{p.stderr}")
    m, c = COMPILES.search(p.stderr), CACHE.search(p.stderr)
    if not m or not c:
        sys.exit(f"FAIL: no kernel statistics in --stats:\n{p.stderr}")
    stats = {"compiled": int(m.group(1)), "linked": int(m.group(2)), "dir": c.group(1),
             "hits": int(c.group(2)), "misses": int(c.group(3)), "corrupt": int(c.group(4)),
             "writes": int(c.group(5))}
    return p.stdout, stats


def check(cond, what, stats):
    if not cond:
        sys.exit(f"FAIL: {what}: {stats}")
    print(f"ok: {what}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vm", required=True)
    vm = ap.parse_args().vm
    with tempfile.TemporaryDirectory(prefix="tessera-kcache-") as d:
        cache = os.path.join(d, "cache")
        out1, s1 = run(vm, cache)
        check(s1["compiled"] > 0 and s1["writes"] >= s1["compiled"] and s1["dir"] == cache,
              "first run compiles its kernels and writes them", s1)
        entries = sorted(os.listdir(cache))
        check(entries and all(e.endswith(".bin") for e in entries), "only whole entries in the cache", entries)

        out2, s2 = run(vm, cache)
        check(s2["compiled"] == 0 and s2["linked"] > 0 and s2["writes"] == 0, "second run compiles nothing", s2)
        check(out2 == out1, "second run prints the same", (out1, out2))

        for e in entries:
            path = os.path.join(cache, e)
            data = bytearray(open(path, "rb").read())
            mid = len(data) // 2
            for i in range(mid, min(mid + 8, len(data))):
                data[i] ^= 0xFF
            open(path, "wb").write(bytes(data))
        out3, s3 = run(vm, cache)
        check(s3["corrupt"] == len(entries) and s3["compiled"] > 0, "damaged entries are found, ignored, rebuilt", s3)
        check(out3 == out1, "the run over a damaged cache prints the same", (out1, out3))

        out4, s4 = run(vm, cache)
        check(s4["compiled"] == 0 and s4["corrupt"] == 0, "rebuilt entries are whole again", s4)

        off = os.path.join(d, "off")
        out5, s5 = run(vm, off, "--jit-param", "kcache=0")
        check(s5["dir"] == "off" and s5["compiled"] > 0 and not os.path.exists(off),
              "kcache=0 neither reads nor writes", s5)
        check(out5 == out1, "kcache=0 prints the same", (out1, out5))
    print("PASS")


if __name__ == "__main__":
    main()
