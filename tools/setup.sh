#!/usr/bin/env bash
# One-shot setup for a fresh Debian 12 machine: installs the build dependencies (only those
# missing, so an already set-up machine never needs apt or network), configures with CMake +
# Ninja into build/, builds, and runs examples/hello.tsb as a sanity check.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PACKAGES=(build-essential cmake ninja-build pkg-config python3 libgtest-dev libgmock-dev
          libbenchmark-dev libcli11-dev libfmt-dev nlohmann-json3-dev libopenblas-dev
          llvm-19-dev libasmjit-dev lua5.4 luajit pypy3)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg -s "$p" >/dev/null 2>&1; then missing+=("$p"); fi
done

if ((${#missing[@]})); then
  echo "==> installing missing packages: ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${missing[@]}"
else
  echo "==> all ${#PACKAGES[@]} apt packages already installed"
fi

echo "==> configuring build/ (CMake + Ninja, Release)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
echo "==> building with -j2"
cmake --build build -j2
echo "==> running examples/hello.tsb"
./build/tessera-vm run examples/hello.tsb
