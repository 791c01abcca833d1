#!/usr/bin/env bash
# The GPU checks, in a bundle made by tools/device-bundle.sh, on a machine with a GPU:
#   1. which device tessera-vm selects (--device=gpu must find it);
#   2. the device layer's tests (the real-driver ones run there) and every generated kernel
#      launched on the GPU against the interpreter;
#   3. the conformance suite with --device=gpu;
#   4. the fused kernels' benchmark (K2, K3 tuned with CUDA events, the device's copy bandwidth,
#      PyTorch eager where it is installed), as the table of experiments/results/gpu-kernels-*.md.
# (NVRTC's checks of every kernel and the code generation benchmark need no GPU: CI and
# experiments/harness/run_cuda_codegen.py run them anywhere; the bundle carries them too.)
# Results (logs, JSON) go to $OUT if set, else ./gpu-results; a summary is printed last.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RES="${OUT:-$PWD/gpu-results}"
mkdir -p "$RES"
declare -A status

run() {  # run NAME COMMAND...: output to $RES/NAME.log, status kept for the summary
  local name="$1"; shift
  echo "==> $name: $*"
  "$@" > "$RES/$name.log" 2>&1
  status[$name]=$?
  tail -3 "$RES/$name.log"
}

{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > "$RES/device.txt" 2>&1
echo 'print(1 + 1)' > "$RES/probe.tsb"
run select "$HERE/bin/tessera-vm" run --device=gpu --stats "$RES/probe.tsb"
run device_test "$HERE/bin/device_test" --gtest_output="json:$RES/device_test.json"
run cuda_device_test "$HERE/bin/cuda_device_test" --gtest_output="json:$RES/cuda_device_test.json"
run conformance_gpu python3 "$HERE/tests/conformance/run_conformance.py" --vm "$HERE/bin/tessera-vm" \
  --vm-args="--device=gpu"
run gpu_kernels python3 "$HERE/experiments/harness/run_gpu_kernels.py" --bench "$HERE/bin/cuda_device_bench" \
  --out "$RES/gpu-kernels-latest.md" --dated

echo
echo "GPU checks of commit $(cat "$HERE/COMMIT") on $(head -1 "$RES/device.txt")"
for name in select device_test cuda_device_test conformance_gpu gpu_kernels; do
  printf '  %-24s %s\n' "$name" "$([[ ${status[$name]} -eq 0 ]] && echo ok || echo "FAILED (${status[$name]})")"
done
[[ -f "$RES/gpu-kernels-latest.md" ]] && cat "$RES/gpu-kernels-latest.md"
