#!/usr/bin/env bash
# Builds, on this (Debian 12) machine, a self-contained bundle for a GPU machine that has the
# CUDA toolkit and driver, CMake and Python, but none of Debian's packages and no network
# (docs/gpu.md, "On a GPU machine"): tessera-vm, the GPU tests and the GPU benchmarks, with
# LLVM linked statically and the other libraries they need (fmt, SLEEF, oneTBB, OpenBLAS, ...)
# in its lib/, found through the binaries' RPATH. The CUDA libraries are not in it: tessera-vm
# loads the machine's own at run time.
#
#   tools/device-bundle.sh [OUT.tar.xz]    (default: build-device/tessera-gpu-bundle.tar.xz)
#
# On the GPU machine: tar xf tessera-gpu-bundle.tar.xz && tessera-gpu-bundle/run-gpu-checks.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${TESSERA_BUNDLE_BUILD:-$ROOT/build-device}"
OUT="${1:-$BUILD/tessera-gpu-bundle.tar.xz}"
LIMIT_MB=50
BINARIES=(tessera-vm tests/runtime/device_test tests/runtime/cuda_kernel_nvrtc_test tests/runtime/cuda_device_test
          tests/runtime/cupti_device_test
          experiments/micro/cuda_codegen_bench experiments/micro/cuda_device_bench experiments/micro/attention_bench
          experiments/micro/nccl_allreduce_bench)

echo "==> configure $BUILD (Release, LLVM static, RPATH \$ORIGIN/../lib)"
# DT_RPATH (not RUNPATH) so that the bundled libraries find each other too (OpenBLAS -> gfortran).
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_STATIC_LLVM=ON \
  -DCMAKE_BUILD_RPATH='$ORIGIN/../lib' -DCMAKE_EXE_LINKER_FLAGS='-Wl,--disable-new-dtags' >/dev/null
targets=()
for b in "${BINARIES[@]}"; do targets+=("$(basename "$b")"); done
targets+=(tessera-llvm)  # the LLVM library tessera-vm loads (docs/jit.md, "Start-up")
echo "==> build ${targets[*]}"
cmake --build "$BUILD" -j2 --target "${targets[@]}"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
B="$stage/tessera-gpu-bundle"
mkdir -p "$B/bin" "$B/lib"
for b in "${BINARIES[@]}"; do
  cp "$BUILD/$b" "$B/bin/"
  strip --strip-unneeded "$B/bin/$(basename "$b")"
done

# Every library the binaries load, except the C library's own (the GPU machine has a glibc at
# least as new as Debian 12's; libstdc++ and libgcc_s travel, in case its are older).
is_system() {
  case "$1" in
    linux-vdso.so.*|ld-linux-x86-64.so.*|libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*) return 0 ;;
    libcuda.so*|libnvrtc*|libcupti*) return 0 ;;  # the machine's own, loaded at run time
  esac
  return 1
}
# Copies into lib/ what the given files load (ldd lists the whole closure).
bundle_libraries() {
  for file in "$@"; do
    ldd "$file" | awk '/=> \// {print $1, $3}' | while read -r name path; do
      is_system "$name" && continue
      [[ -e "$B/lib/$name" ]] || cp -L "$path" "$B/lib/$name"
    done
  done
}
bundle_libraries "$B"/bin/*
# OpenBLAS is loaded at the first matrix product (vm/tensor/blas_library.h), so ldd does not
# list it: it goes in by its soname, which the binaries' RPATH finds.
cp -L "$(ldconfig -p | awk '$1 == "libopenblas.so.0" {print $NF; exit}')" "$B/lib/libopenblas.so.0"
# And what the bundled libraries load in turn (OpenBLAS -> gfortran), as a check: ldd already listed it.
bundle_libraries "$B"/lib/*
# tessera-vm loads its LLVM library from ../lib/tessera beside its bin/.
mkdir -p "$B/lib/tessera"
cp "$BUILD/libtessera-llvm.so" "$B/lib/tessera/"
strip --strip-unneeded "$B/lib/tessera/libtessera-llvm.so"
bundle_libraries "$B/lib/tessera/libtessera-llvm.so"

# What the checks run: the conformance suite and its runner, the tensor benchmark programs, the
# harness scripts that turn the benchmarks' JSON into the tables of experiments/results/.
mkdir -p "$B/tests" "$B/experiments/bench"
cp -r "$ROOT/tests/conformance" "$B/tests/"
rm -f "$B/tests/conformance/CMakeLists.txt"
# The runner imports its LeakSanitizer fallback from tests/ (run_conformance.py's sys.path).
cp "$ROOT/tests/lsan_tracer_crash.py" "$B/tests/"
cp -r "$ROOT/experiments/bench/tensor" "$ROOT/experiments/bench/collectives" "$B/experiments/bench/"
mkdir -p "$B/experiments/harness" "$B/experiments/evaluation"
cp "$ROOT"/experiments/harness/*.py "$B/experiments/harness/"
# What the harnesses' --raw-dir imports (the evaluation's raw results and their statistics).
cp "$ROOT/experiments/evaluation/raw_results.py" "$ROOT/experiments/evaluation/protocol.py" "$B/experiments/evaluation/"
# The NCCL check (run-gpu-checks.sh nccl) and what it imports.
mkdir -p "$B/tests/runtime/comm"
cp "$ROOT/tests/runtime/cli_checks.py" "$B/tests/runtime/"
cp "$ROOT/tests/runtime/comm/nccl_emulation_test.py" "$ROOT/tests/runtime/comm/mpi_run.py" "$B/tests/runtime/comm/"
cp "$ROOT/tools/run-gpu-checks.sh" "$B/run-gpu-checks.sh"
git -C "$ROOT" rev-parse --short=12 HEAD > "$B/COMMIT" 2>/dev/null || echo unknown > "$B/COMMIT"

mkdir -p "$(dirname "$OUT")"
# xz -9 on one thread: its 64 MiB window spans a whole binary, so the LLVM that each GPU test links
# statically (about 40 MB of each) is stored once (80 MB with tar -J's default, 38 MB so). It takes
# about 4 minutes here.
tar -C "$stage" -cf - tessera-gpu-bundle | xz -T1 -9 > "$OUT"
size_mb=$(( $(stat -c %s "$OUT") / 1024 / 1024 ))
echo "==> $OUT: ${size_mb} MB compressed ($(du -sm "$B" | cut -f1) MB unpacked)"
if (( size_mb >= LIMIT_MB )); then
  echo "device-bundle: the bundle is ${size_mb} MB, over the ${LIMIT_MB} MB limit" >&2
  exit 1
fi
