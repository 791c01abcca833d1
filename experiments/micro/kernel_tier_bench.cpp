// K2 against K3 (architecture §3) on fused regions of the shapes the tensor
// programs make (elementwise kernels, row kernels, a product's epilogue), as
// Google Benchmarks:
//   BM_Run/CASE/0   the region's K2 kernel (dims are parameters, launch heuristics)
//   BM_Run/CASE/1   its K3 kernel: dims constant, tile and layout chosen by
//                   the tuner (runtime/kernels/kernel_tuner.h: the CPU
//                   target's variants, timed), which the
//                   label names
//   BM_CompileK2/CASE   compiling the K2 kernel (kernel IR → object code)
// The same inputs for both (every element 1, as the tuner's), outputs
// allocated per run as in a trace. experiments/harness/run_kernel_tiers.py
// runs this and writes the table in experiments/results/.
//
//   cmake --build build --target kernel_tier_bench && build/experiments/micro/kernel_tier_bench
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "runtime/kernels/cpu_target.h"
#include "runtime/kernels/kernel_tuner.h"
#include "experiments/micro/bench_regions.h"

namespace {

using namespace tessera;
using namespace tessera::kir;
using namespace tessera::bench_regions;
using Case = BenchCase;

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"muladd_1024x1024", kMulAdd, {1024, 1024}}, {"muladd_128x1024", kMulAdd, {128, 1024}},
      {"muladd_64x64", kMulAdd, {64, 64}},         {"muladd_1000x37", kMulAdd, {1000, 37}},
      {"muladd_4096x24", kMulAdd, {4096, 24}},     {"bcast3_32x64x48", kBroadcast3, {32, 64, 48}},
      {"chain_1M", kChain, {1 << 20}},             {"chain_4096", kChain, {4096}},
      {"softmax_rms_1024x1024", kSoftmaxRms, {1024, 1024}}, {"softmax_rms_4096x64", kSoftmaxRms, {4096, 64}},
      {"layernorm_512x768", kLayerNorm, {512, 768}},       {"rowsum_4096x64", kRowSum, {4096, 64}},
      {"matmul_gelu_128x256x1024", kMatmulGelu, {128, 256, 1024}},
  };
  return c;
}

std::vector<Value> inputs(const Region& r, const std::vector<int64_t>& sym) {
  std::vector<Value> in;
  for (const RegionType& t : r.inputs) {
    if (!t.tensor) {
      in.push_back(Value::number(0.5));
      continue;
    }
    Shape shape;
    for (int d : t.dims) shape.push_back(d == kDimOne ? 1 : sym[static_cast<size_t>(d)]);
    Value v = make_tensor(t.dtype, std::move(shape), false);
    float* p = static_cast<float*>(v.as_tensor()->data());
    for (int64_t i = 0; i < v.as_tensor()->numel; ++i) p[i] = 1.0f;
    in.push_back(std::move(v));
  }
  return in;
}

tessera::kernels::CpuTarget& cpu() {
  using namespace tessera::kernels;
  static KernelStore* store = new KernelStore;  // no disk cache: every kernel compiled here
  static CpuTarget* t = new CpuTarget(*store);
  return *t;
}

void BM_Run(benchmark::State& state) {
  const Case& c = cases()[static_cast<size_t>(state.range(0))];
  const bool k3 = state.range(1) == 1;
  const Region r = parse_region(c.region);
  const std::vector<Value> in = inputs(r, c.symbols);
  using namespace tessera::kernels;
  DimSpec spec;
  KernelVariant best;
  if (k3) {
    spec.assign(c.symbols.begin(), c.symbols.end());
    const std::vector<KernelVariant> variants = cpu().variants(r, spec, c.symbols);
    std::vector<std::shared_ptr<const TargetKernel>> ks;
    for (const KernelVariant& v : variants) ks.push_back(cpu().compile(r, spec, v));
    auto time = cpu().timer(r, c.symbols);
    best = KernelTuner::fastest(variants, [&](size_t i) { return time(*ks[i]); }, cpu().timing_plan()).best;
    state.SetLabel(best.str());
  }
  const std::shared_ptr<const TargetKernel> kernel = cpu().compile(r, spec, best);
  std::string why;
  for (auto _ : state) benchmark::DoNotOptimize(cpu().launch(r, *kernel, in, c.symbols, nullptr, why));
  int64_t elements = 1;
  for (int64_t s : c.symbols) elements *= s;
  state.SetItemsProcessed(state.iterations() * elements);
}

void BM_CompileK2(benchmark::State& state) {
  const Case& c = cases()[static_cast<size_t>(state.range(0))];
  const Kernel k = lower_region(parse_region(c.region), "region");
  for (auto _ : state) benchmark::DoNotOptimize(cpu().compiler().compile_object(k, "k").bytes.size());
}

void all_cases(benchmark::internal::Benchmark* b, bool tiers) {
  for (size_t i = 0; i < cases().size(); ++i) {
    if (tiers) {
      b->Args({static_cast<int64_t>(i), 0})->Args({static_cast<int64_t>(i), 1});
    } else {
      b->Arg(static_cast<int64_t>(i));
    }
  }
}

}  // namespace

BENCHMARK(BM_Run)->Apply([](auto* b) { all_cases(b, true); })->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_CompileK2)->Apply([](auto* b) { all_cases(b, false); })->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  // Names that say the case: BM_Run/<case>/<tier> instead of argument indices.
  for (size_t i = 0; i < cases().size(); ++i) benchmark::AddCustomContext("case" + std::to_string(i), cases()[i].name);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
