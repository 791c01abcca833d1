#!/usr/bin/env bash
# The GPU checks, in a bundle made by tools/device-bundle.sh, on a machine with a GPU:
#   1. which device tessera-vm selects (--device=gpu must find it);
#   2. the device layer's tests (the real-driver ones run there) and every generated kernel
#      launched on the GPU against the interpreter;
#   3. the conformance suite with --device=gpu;
#   4. the fused kernels' benchmark (K2, K3 tuned with CUDA events, the device's copy bandwidth,
#      PyTorch eager where it is installed), as the table of experiments/results/gpu-kernels-*.md;
#   5. the attention and half-precision products benchmark against PyTorch's scaled_dot_product_attention
#      backends and torch.matmul (experiments/harness/run_attention_bench.py), as the table of
#      experiments/results/attention-*.md: the quick profile (small and medium configurations, the
#      precision pair, products up to 4096) with a time budget of 150 s, so that the whole script
#      stays within about 8 minutes on an H200; the full profile is a run of its own
#      (run_attention_bench.py --profile full, tens of minutes);
#   6. GPU profiling (experiments/harness/run_gpu_profile.py): CUPTI's tests on the real library
#      (cupti_device_test: every kernel recorded and correlated, the tuner ranking by CUPTI's time,
#      the records' cost on and off), the overhead criteria on elementwise_chain and a profiled
#      tuning run (--profile-kernels), as experiments/results/gpu-profile-*.md;
#   7. collectives of tensors on the GPU through the machine's libnccl
#      (tests/runtime/comm/nccl_emulation_test.py --real): under mpirun -np 1 where mpirun is
#      (one GPU: one rank; --stats must say NCCL carried them, NCCL_DEBUG=INFO's version and
#      algorithm lines are kept in the log), else the program as one process (no NCCL then);
#   8. the NCCL all-reduce benchmark (experiments/harness/run_nccl_bench.py): a script's all_reduce
#      of tensors the GPU holds against plain ncclAllReduce calls as nccl-tests makes them, 1 KB to
#      256 MB, -np 1 (one GPU), as experiments/results/nccl-allreduce-*.md; without mpirun only the
#      plain side runs and the table says why.
# libnccl: the machine's (libnccl.so.2 on the loader's path or in CUDA's lib64), else the one the
# Python packages carry (nvidia-nccl, PyTorch's), named by TESSERA_NCCL_LIBRARY.
# Named steps run only those (run-gpu-checks.sh cupti_device_test gpu_profile): a session's
# device time is short, and the steps' limits add up to more than it.
# (NVRTC's checks of every kernel and the code generation benchmark need no GPU: CI and
# experiments/harness/run_cuda_codegen.py run them anywhere; the bundle carries them too.)
# Results (logs, JSON) go to $OUT if set, else ./gpu-results; a summary is printed last.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RES="${OUT:-$PWD/gpu-results}"
mkdir -p "$RES"
declare -A status

# A step that hangs (a kernel that never ends, say) is stopped so that the others still run and
# the results come back: each has a limit in seconds, TESSERA_GPU_CHECK_LIMIT times one (default 1).
scale="${TESSERA_GPU_CHECK_LIMIT:-1}"
steps=(select device_test cuda_device_test cupti_device_test conformance_gpu gpu_kernels attention gpu_profile nccl
       nccl_bench)
wanted=("$@")
run() {  # run NAME SECONDS COMMAND...: output to $RES/NAME.log, status kept for the summary
  local name="$1" limit=$(( $2 * scale )); shift 2
  if (( ${#wanted[@]} )) && [[ " ${wanted[*]} " != *" $name "* ]]; then status[$name]=skipped; return; fi
  echo "==> $name (at most ${limit} s): $*"
  timeout -k 10 "$limit" "$@" > "$RES/$name.log" 2>&1
  status[$name]=$?
  tail -3 "$RES/$name.log"
}

{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > "$RES/device.txt" 2>&1
if [[ -z "${TESSERA_NCCL_LIBRARY:-}" ]] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2' &&
   [[ ! -e "${CUDA_HOME:-/usr/local/cuda}/lib64/libnccl.so.2" && ! -e /usr/local/cuda/lib64/libnccl.so.2 ]]; then
  wheel_nccl="$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)"
  [[ -n "$wheel_nccl" && -e "$wheel_nccl" ]] && export TESSERA_NCCL_LIBRARY="$wheel_nccl"
fi
echo "libnccl: ${TESSERA_NCCL_LIBRARY:-libnccl.so.2 as the loader finds it}; mpirun: $(command -v mpirun || echo none)" >> "$RES/device.txt"
echo 'print(1 + 1)' > "$RES/probe.tsb"
run select 60 "$HERE/bin/tessera-vm" run --device=gpu --stats "$RES/probe.tsb"
run device_test 120 "$HERE/bin/device_test" --gtest_output="json:$RES/device_test.json"
run cuda_device_test 240 "$HERE/bin/cuda_device_test" --gtest_output="json:$RES/cuda_device_test.json"
run cupti_device_test 180 "$HERE/bin/cupti_device_test" --gtest_output="json:$RES/cupti_device_test.json"
run conformance_gpu 240 python3 "$HERE/tests/conformance/run_conformance.py" --vm "$HERE/bin/tessera-vm" \
  --vm-args="--device=gpu" --jobs "$(nproc)"
run gpu_kernels 300 python3 "$HERE/experiments/harness/run_gpu_kernels.py" --bench "$HERE/bin/cuda_device_bench" \
  --out "$RES/gpu-kernels-latest.md" --dated --raw-dir "$RES/raw"
run attention 300 python3 "$HERE/experiments/harness/run_attention_bench.py" --bench "$HERE/bin/attention_bench" \
  --profile quick --budget-s 150 --out "$RES/attention-latest.md" --dated --json-dir "$RES" --raw-dir "$RES/raw"
run gpu_profile 240 python3 "$HERE/experiments/harness/run_gpu_profile.py" --vm "$HERE/bin/tessera-vm" \
  --test "$HERE/bin/cupti_device_test" --program "$HERE/experiments/bench/tensor/elementwise_chain.tsb" \
  --out "$RES/gpu-profile-latest.md" --dated --json-dir "$RES"
run nccl 180 python3 "$HERE/tests/runtime/comm/nccl_emulation_test.py" --vm "$HERE/bin/tessera-vm" --real --np 1
run nccl_bench 300 python3 "$HERE/experiments/harness/run_nccl_bench.py" --vm "$HERE/bin/tessera-vm" \
  --bench "$HERE/bin/nccl_allreduce_bench" --np 1 --out "$RES/nccl-allreduce-latest.md" --dated --raw-dir "$RES/raw"

echo
echo "GPU checks of commit $(cat "$HERE/COMMIT") on $(head -1 "$RES/device.txt"), $(date -u +%F)"
for name in "${steps[@]}"; do
  case "${status[$name]}" in
    skipped) verdict="not run (not named)" ;;
    0) verdict=ok ;;
    124|137) verdict="STOPPED at its limit" ;;
    *) verdict="FAILED (${status[$name]})" ;;
  esac
  printf '  %-24s %s\n' "$name" "$verdict"
done
[[ -f "$RES/gpu-kernels-latest.md" ]] && cat "$RES/gpu-kernels-latest.md"
[[ -f "$RES/attention-latest.md" ]] && cat "$RES/attention-latest.md"
[[ -f "$RES/gpu-profile-latest.md" ]] && cat "$RES/gpu-profile-latest.md"
[[ -f "$RES/nccl-allreduce-latest.md" ]] && cat "$RES/nccl-allreduce-latest.md"
