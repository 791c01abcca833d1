// The CUDA backend's code generation without a GPU: how long the emitter
// takes (kernel IR to CUDA C++) and how long NVRTC takes to compile the
// result (a cold compile: NVRTC keeps nothing between programs) for sm_90a
// (a cubin) and compute_90 (the PTX fallback), with ptxas's register count
// as the label. The kernels are the regions of the emulation and NVRTC
// tests (tests/codegen/kernel/cuda_test_cases.h), K2, at their largest
// input set's shapes. Read by experiments/harness/run_cuda_codegen.py.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/kernel/cuda/cuda_region.h"
#include "runtime/device/cuda_kernel_compiler.h"
#include "tests/codegen/kernel/cuda_test_cases.h"

namespace {

using tessera::kir::CudaKernelSource;
using tessera::kir::testing::CudaCase;

// One case per kernel kind.
const std::vector<std::string> kCases = {"chain_f32",  "broadcast_half", "ints_where_casts", "softmax_rms_norm", "layer_norm",
                                         "sum_row",    "argmax_row",     "sum_all",          "rows_half",        "matmul_bias_gelu",
                                         "attention", "attention_causal"};
const char* const kArchs[] = {"sm_90a", "compute_90"};

const CudaCase& case_named(const std::string& name) {
  static const std::vector<CudaCase> cases = tessera::kir::testing::cuda_cases();
  for (const CudaCase& c : cases)
    if (c.name == name) return c;
  throw std::runtime_error("no case " + name);
}

CudaKernelSource emit(const CudaCase& c) {
  return tessera::kir::emit_cuda_kernel(tessera::kir::testing::lower_case(c, c.name, nullptr), "tsr_" + c.name,
                                        tessera::kir::cuda_target_for(c.region));
}

void BM_Emit(benchmark::State& state) {
  const CudaCase& c = case_named(kCases[static_cast<size_t>(state.range(0))]);
  const tessera::kir::Kernel k = tessera::kir::testing::lower_case(c, c.name, nullptr);
  for (auto _ : state) benchmark::DoNotOptimize(tessera::kir::emit_cuda_kernel(k, "tsr_k", tessera::kir::cuda_target_for(c.region)));
  state.SetLabel(c.name);
}

void BM_Nvrtc(benchmark::State& state) {
  const auto& nvrtc = tessera::device::NvrtcLibrary::get();
  if (!nvrtc.available()) {
    state.SkipWithError(("NVRTC is not available: " + nvrtc.why_unavailable()).c_str());
    return;
  }
  const tessera::device::CudaKernelCompiler compiler(nvrtc);
  const CudaCase& c = case_named(kCases[static_cast<size_t>(state.range(0))]);
  const CudaKernelSource src = emit(c);
  const char* arch = kArchs[state.range(1)];
  tessera::device::CudaCompiled out;
  for (auto _ : state) out = compiler.compile(src, arch);
  if (!out.ok) {
    state.SkipWithError(("compile failed: " + out.log.substr(0, 200)).c_str());
    return;
  }
  state.SetLabel(c.name + " " + arch + (out.report ? " regs=" + std::to_string(out.report->registers) : std::string()) +
                 " lines=" + std::to_string(std::count(src.source.begin(), src.source.end(), '\n')));
}

void cases(benchmark::internal::Benchmark* b) {
  for (size_t i = 0; i < kCases.size(); ++i) b->Arg(static_cast<int64_t>(i));
}

void cases_archs(benchmark::internal::Benchmark* b) {
  for (size_t i = 0; i < kCases.size(); ++i)
    for (int a = 0; a < 2; ++a) b->Args({static_cast<int64_t>(i), a});
}

BENCHMARK(BM_Emit)->Apply(cases)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Nvrtc)->Apply(cases_archs)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const auto& nvrtc = tessera::device::NvrtcLibrary::get();
  benchmark::AddCustomContext("nvrtc", nvrtc.available() ? std::to_string(nvrtc.version().first) + "." +
                                                               std::to_string(nvrtc.version().second)
                                                         : "unavailable: " + nvrtc.why_unavailable());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
