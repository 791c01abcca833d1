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
# The paper (papers/tessera-vm) and the evaluation's peers: TeX Live without its recommended
# extras (documentation, more fonts: about a gigabyte less), matplotlib, poppler-utils
# (pdftoppm, pdfinfo, pdftotext for the paper's check), numexpr and Numba.
PAPER_PACKAGES=(texlive-latex-base texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended
                python3-matplotlib poppler-utils python3-numexpr python3-numba)

missing_of() {
  local p
  for p in "$@"; do
    if ! dpkg -s "$p" >/dev/null 2>&1; then echo "$p"; fi
  done
}
mapfile -t missing < <(missing_of "${PACKAGES[@]}")
mapfile -t missing_paper < <(missing_of "${PAPER_PACKAGES[@]}")

if ((${#missing[@]} + ${#missing_paper[@]})); then
  echo "==> installing missing packages: ${missing[*]} ${missing_paper[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update
  if ((${#missing[@]})); then DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${missing[@]}"; fi
  if ((${#missing_paper[@]})); then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing_paper[@]}"
  fi
else
  echo "==> all $((${#PACKAGES[@]} + ${#PAPER_PACKAGES[@]})) apt packages already installed"
fi

