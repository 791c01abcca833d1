#!/usr/bin/env bash
# Installs the Debian 12 packages Tessera VM needs to build, test and benchmark, only those
# that are missing (an already set-up machine needs neither apt nor network). Used by
# setup.sh and test.sh.
set -euo pipefail

PACKAGES=(build-essential cmake ninja-build pkg-config python3 libgtest-dev libgmock-dev
          libbenchmark-dev libcli11-dev libfmt-dev nlohmann-json3-dev libopenblas-dev
          llvm-19-dev libasmjit-dev libsleef-dev libtbb-dev lua5.4 luajit pypy3
          python3-numpy python3-scipy python3-torch libboost-context-dev graphviz chromium
          libdlpack-dev pybind11-dev python3-dev zlib1g-dev libzstd-dev ccache gdb
          openmpi-bin libopenmpi-dev)

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

