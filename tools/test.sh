#!/usr/bin/env bash
# Full test run, as CI does it: Release build + all tests (unit and conformance), then an
# ASan+UBSan build in build-asan/ running the whole suite again, then a benchmark smoke run
# (small sizes, tessera-vm only) that checks the checksums. Runs from any directory.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
JOBS=2   # the CI machines have 2 cores

echo "==> [0/4] build dependencies"
"$ROOT/tools/install-deps.sh"

# Each stage's time, for keeping CI under its limit (45 minutes on 2 cores).
stage_start=$SECONDS
stage_done() { echo "==> $1 took $(( (SECONDS - stage_start) / 60 )) min $(( (SECONDS - stage_start) % 60 )) s"; stage_start=$SECONDS; }

echo "==> [1/4] configure + build build/ (Release)"
# The configuration tools/setup.sh makes, so that a test run after set-up builds nothing again.
# Both builds compile through ccache where it is installed (CMakeLists.txt, TESSERA_CCACHE).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_WERROR=ON
cmake --build build -j"$JOBS"
stage_done "the Release build"

echo "==> [2/4] ctest in build/"
# Each build's tests share a kernel cache of their own (docs/tensor-jit.md), not the user's.
# CI keeps the end of the output: after a failure, each failed test's output is printed last.
TESSERA_CACHE_DIR="$ROOT/build/kernel-cache" ctest --test-dir build --output-on-failure -j"$JOBS" \
  || { rc=$?; python3 tools/ctest-failures.py build || true; exit $rc; }
stage_done "the Release tests"

echo "==> [3/4] configure + build build-asan/ (ASan + UBSan) and run the suite there"
# RelWithDebInfo keeps the sanitizer build fast enough for the conformance suite while
# giving symbolised reports.
# The micro-benchmarks are not built there: nothing runs them under the sanitizers.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_SANITIZE=ON -DTESSERA_WERROR=ON \
  -DTESSERA_BUILD_BENCH=OFF
cmake --build build-asan -j"$JOBS"
stage_done "the ASan+UBSan build"
# intercept_tls_get_addr=0: GCC 12's sanitizer runtime takes a dynamic-TLS block that malloc
# placed 16 bytes past a page boundary for a glibc 2.19-2.24 block with a header and scans the
# range two words before it name; that range is garbage, and LeakSanitizer's tracer crashes on it
# at exit ("Tracer caught signal 11", google/sanitizers#1322; fixed in LLVM 17). Glibc 2.25 and
# later allocate those blocks with malloc from ld.so, whose blocks LSan counts as reachable
# (use_ld_allocations), so its leak check needs no hook to scan them.
ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0 UBSAN_OPTIONS=print_stacktrace=1 TESSERA_CACHE_DIR="$ROOT/build-asan/kernel-cache" \
  ctest --test-dir build-asan --output-on-failure -j"$JOBS" \
  || { rc=$?; python3 tools/ctest-failures.py build-asan || true; exit $rc; }
stage_done "the ASan+UBSan tests"

echo "==> [4/4] benchmark smoke run (small sizes, checksums only)"
smoke_out="$(mktemp -d)"
trap 'rm -rf "$smoke_out"' EXIT
python3 experiments/harness/run_bench.py --vm build/tessera-vm --runs 1 --size small \
  --peers tessera,tessera-interp --check-only --out-dir "$smoke_out"
# The small-tensor programs: every tier, with and without sinking, prints
# what the interpreter prints.
python3 experiments/harness/run_sinking.py --vm build/tessera-vm --runs 1 --size small --check-only
# The tensor suite at small sizes: fused K2 and K3 kernels print the interpreter's checksums.
python3 experiments/harness/run_tensor_bench.py --vm build/tessera-vm --runs 1 --size small \
  --peers tessera,tessera-interp,tessera-k2 --stream-elements 1000000 --out-dir "$smoke_out"

stage_done "the smoke run"
echo "==> all tests passed"
