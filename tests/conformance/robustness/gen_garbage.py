#!/usr/bin/env python3
"""Regenerates the binary garbage_*.tsb inputs of the robustness tests.

The bytes come from a fixed linear congruential generator (not Python's `random`, whose
streams may change between versions), so rerunning this script rewrites identical files.
Each input must make the VM exit with status 2 and a syntax error, never crash or hang.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def lcg_bytes(seed, n, lo=0, hi=255):
    out = bytearray()
    x = seed
    for _ in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
        out.append(lo + (x >> 33) % (hi - lo + 1))
    return bytes(out)


TOKENS = ["fn", "let", "if", "elif", "else", "while", "for", "in", "break", "continue", "return",
          "true", "false", "nil", "and", "or", "not", "(", ")", "[", "]", "{", "}", ",", ";",
          "=", "+=", "==", "<", "**", "@", "//", "%", "x", "f", "1", "2.5", "\"s\"", "\n", "-"]


def token_soup(seed, n):
    picks = lcg_bytes(seed, n, 0, len(TOKENS) - 1)
    return " ".join(TOKENS[p] for p in picks).encode()


CASES = {
    # any byte value, NUL included
    "garbage_random_bytes": b"\x01" + lcg_bytes(1, 2048),
    # a valid start, then noise
    "garbage_after_valid_prefix": b"let x = 1\nprint(x)\nlet y = " + lcg_bytes(2, 512),
    # high bytes only: invalid outside strings and comments
    "garbage_high_bytes": lcg_bytes(3, 1024, 128, 255),
    # printable punctuation soup: stresses the parser rather than the lexer
    "garbage_punctuation": b"(" + lcg_bytes(4, 2048, 33, 47),
    # keywords and symbols in random order
    "garbage_token_soup": b"let = " + token_soup(5, 400),
    # a NUL byte in the middle of an otherwise valid program
    "garbage_nul_byte": b"print(1)\n\x00\nprint(2)\n",
    # a raw NUL inside a string literal (only NUL is forbidden there)
    "garbage_nul_in_string": b"print(\"a\x00b\")\n",
    # a UTF-8 byte-order mark and a lone continuation byte before code
    "garbage_bom": b"\xef\xbb\xbfprint(1)\n\x80\n",
}

if __name__ == "__main__":
    for name, data in CASES.items():
        with open(os.path.join(HERE, name + ".tsb"), "wb") as f:
            f.write(data)
        print("wrote", name + ".tsb", len(data), "bytes")
