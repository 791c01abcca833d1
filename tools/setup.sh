#!/usr/bin/env bash
# One-shot setup for a fresh Debian 12 machine: installs the build dependencies (only those
# missing, so an already set-up machine never needs apt or network), configures with CMake +
# Ninja into build/ (as tools/test.sh does: warnings are errors), builds, and runs
# examples/hello.tsb as a sanity check.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

"$ROOT/tools/install-deps.sh"

echo "==> configuring build/ (CMake + Ninja, Release)"
# The configuration tools/test.sh uses, so that the test run after set-up builds nothing again.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_WERROR=ON
echo "==> building with -j2"
cmake --build build -j2
echo "==> running examples/hello.tsb"
./build/tessera-vm run examples/hello.tsb
