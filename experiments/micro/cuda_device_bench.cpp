// Fused kernels on a GPU against the device's memory bandwidth, as Google
// Benchmarks timed with CUDA events (manual time):
//   BM_Copy/30       a device-to-device copy of 2^30 bytes: the bandwidth ceiling
//                    (bytes read plus bytes written)
//   BM_Kernel/C/0    case C's region as a K2 kernel (dims are parameters)
//   BM_Kernel/C/1    its K3 kernel: dims constant, the tile and block size
//                    chosen by timing candidates with CUDA events (the label
//                    names the winner)
// Counters: bytes moved (every input read once, every output written once)
// and GB/s. Without a usable GPU every benchmark is skipped with the reason.
// experiments/harness/run_gpu_kernels.py runs this on a GPU machine (inside
// the device bundle: tools/run-gpu-checks.sh) and writes the table.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel/cuda/cuda_region.h"
#include "codegen/kernel/lower_region.h"
#include "experiments/micro/bench_regions.h"
#include "runtime/device/device_selection.h"
#include "runtime/device/cuda_kernel_compiler.h"
#include "runtime/device/gpu_stream.h"
#include "runtime/kernels/gpu_target.h"

namespace {

using namespace tessera;
using namespace tessera::device;
using namespace tessera::bench_regions;

// Large enough to fill the device (hundreds of MB per case).
const std::vector<BenchCase>& gpu_cases() {
  static const std::vector<BenchCase> c = {
      {"chain_64M", kChain, {64 << 20}},
      {"muladd_8192x8192", kMulAdd, {8192, 8192}},
      {"softmax_rms_16384x1024", kSoftmaxRms, {16384, 1024}},
      {"layernorm_8192x4096", kLayerNorm, {8192, 4096}},
      {"rowsum_65536x256", kRowSum, {65536, 256}},
  };
  return c;
}

// The process's GPU, stream, allocator and compiler; null with the reason when there is none.
struct Gpu {
  DeviceSelection sel;
  std::unique_ptr<GpuStream> stream;
  std::unique_ptr<CudaMemory> memory;
  std::unique_ptr<DeviceAllocator> alloc;
  std::unique_ptr<CudaKernelCompiler> compiler;
};

Gpu* gpu(std::string* why) {
  static Gpu* g = [why]() -> Gpu* {
    auto x = new Gpu;
    x->sel = select_device(DeviceChoice::Auto);
    if (!x->sel.gpu) {
      *why = x->sel.reason;
      return nullptr;
    }
    x->stream = std::make_unique<GpuStream>(*x->sel.gpu_device);
    x->memory = std::make_unique<CudaMemory>(*x->stream);
    x->alloc = std::make_unique<DeviceAllocator>(*x->memory);
    x->compiler = std::make_unique<CudaKernelCompiler>();
    return x;
  }();
  static std::string reason = *why;
  *why = reason;
  return g;
}

// A case's params on the device: inputs filled with a wave, outputs allocated.
struct DeviceParams {
  std::vector<DevicePtr> blocks;  // per param (0: by value)
  std::vector<void*> ptrs;
  std::vector<float> scalars;
  std::vector<void*> params;
  int64_t bytes = 0;  // read once and written once
};

DeviceParams upload(Gpu& g, const Region& r, const std::vector<int64_t>& sym) {
  DeviceParams d;
  const size_t n = r.inputs.size() + r.outputs.size();
  d.blocks.assign(n, 0);
  d.ptrs.assign(n, nullptr);
  d.scalars.assign(n, 0.5f);
  for (size_t i = 0; i < n; ++i) {
    const RegionType& t = i < r.inputs.size() ? r.inputs[i] : r.type(r.outputs[i - r.inputs.size()]);
    if (!t.tensor) {
      d.params.push_back(&d.scalars[i]);
      continue;
    }
    int64_t numel = 1;
    for (int s : t.dims) numel *= s == kDimOne ? 1 : sym[static_cast<size_t>(s)];
    const size_t bytes = static_cast<size_t>(numel) * sizeof(float);
    d.blocks[i] = g.alloc->allocate(bytes);
    if (i < r.inputs.size()) {
      std::vector<float> host(static_cast<size_t>(numel));
      for (int64_t e = 0; e < numel; ++e) host[static_cast<size_t>(e)] = std::sin(0.37f * static_cast<float>(e % 10007));
      g.stream->upload(d.blocks[i], host.data(), bytes);
    }
    d.bytes += static_cast<int64_t>(bytes);
    d.ptrs[i] = reinterpret_cast<void*>(d.blocks[i]);
    d.params.push_back(&d.ptrs[i]);
  }
  g.stream->synchronize();
  return d;
}

// One loaded kernel of a region, ready to launch on the params.
struct Launchable {
  kir::CudaKernelSource source;
  std::optional<PtxasReport> report;
  std::unique_ptr<GpuModule> module;
  kir::Kernel kernel;
  std::vector<int64_t> grid;
  std::vector<void*> args;
  double time_ms(Gpu& g, const std::vector<int64_t>& sym, DeviceParams& p, int reps) {
    grid = kernel.grid_extents(sym);
    args = kir::cuda_kernel_args(source, p.params, sym, grid);
    const int64_t blocks = grid[0] * grid[1] * grid[2];
    std::vector<double> t;
    for (int i = 0; i < reps + 2; ++i)
      t.push_back(g.stream->time_ms([&] { module->launch(*g.stream, blocks, source.threads, args); }));
    t.erase(t.begin(), t.begin() + 2);  // warm-up
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};

Launchable make(Gpu& g, const Region& r, const kir::RegionLowering& opt, int threads) {
  Launchable l;
  l.kernel = kir::lower_region(r, "region", opt);
  l.source = kir::emit_cuda_kernel(l.kernel, "tsr_region", kir::cuda_target_for(r, threads));
  CudaCompiled c = g.compiler->compile(l.source, g.sel.arch);
  if (!c.ok) throw DeviceError("NVRTC refused kernel " + l.source.entry + ":\n" + c.log);
  l.report = c.report;
  l.module = std::make_unique<GpuModule>(*g.sel.gpu_device, c.cubin.empty() ? c.ptx : c.cubin, l.source.entry,
                                         l.source.shared_bytes);
  return l;
}

void BM_Copy(benchmark::State& state) {
  std::string why;
  Gpu* g = gpu(&why);
  if (!g) return state.SkipWithError(("no usable GPU: " + why).c_str());
  const size_t bytes = size_t{1} << state.range(0);
  const DevicePtr a = g->alloc->allocate(bytes), b = g->alloc->allocate(bytes);
  const CudaDriver& d = g->sel.gpu_device->driver();
  for (auto _ : state) {
    const double ms = g->stream->time_ms([&] { d.check(d.cuMemcpyDtoDAsync(b, a, bytes, g->stream->get()), "cuMemcpyDtoDAsync"); });
    state.SetIterationTime(ms / 1e3);
  }
  state.counters["bytes"] = static_cast<double>(2 * bytes);
  state.counters["GBps"] = benchmark::Counter(static_cast<double>(2 * bytes) * static_cast<double>(state.iterations()) / 1e9,
                                              benchmark::Counter::kIsRate);
  g->alloc->free(a);
  g->alloc->free(b);
}

void BM_Kernel(benchmark::State& state) {
  std::string why;
  Gpu* g = gpu(&why);
  if (!g) return state.SkipWithError(("no usable GPU: " + why).c_str());
  const BenchCase& c = gpu_cases()[static_cast<size_t>(state.range(0))];
  const bool k3 = state.range(1) == 1;
  const Region r = parse_region(c.region);
  DeviceParams p = upload(*g, r, c.symbols);
  kir::RegionLowering opt;
  Launchable best;
  std::string label = "K2 tile=1024";
  if (!k3) {
    best = make(*g, r, opt, 0);
  } else {
    // K3: the GPU tuner's choice among its variants, each compiled and timed
    // with CUDA events (no cache: tuned in every run of the benchmark).
    const kernels::DimSpec spec(c.symbols.begin(), c.symbols.end());
    const std::vector<kernels::KernelVariant> variants = kernels::gpu_variants(r);
    const kernels::TuneOutcome t = kernels::KernelTuner::fastest(
        variants,
        [&](size_t i) {
          Launchable l = make(*g, r, variants[i].lowering(spec), variants[i].threads);
          return l.time_ms(*g, c.symbols, p, 5);
        },
        kernels::TimingPlan{});
    best = make(*g, r, t.best.lowering(spec), t.best.threads);
    label = "K3 " + t.best.str();
  }
  for (auto _ : state) state.SetIterationTime(best.time_ms(*g, c.symbols, p, 1) / 1e3);
  state.SetLabel(label + " regs=" + (best.report ? std::to_string(best.report->registers) : "?"));
  state.counters["bytes"] = static_cast<double>(p.bytes);
  state.counters["GBps"] = benchmark::Counter(static_cast<double>(p.bytes) * static_cast<double>(state.iterations()) / 1e9,
                                              benchmark::Counter::kIsRate);
  for (DevicePtr b : p.blocks)
    if (b) g->alloc->free(b);
}

}  // namespace

BENCHMARK(BM_Copy)->Arg(30)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Kernel)
    ->Apply([](auto* b) {
      for (size_t i = 0; i < gpu_cases().size(); ++i) b->Args({static_cast<int64_t>(i), 0})->Args({static_cast<int64_t>(i), 1});
    })
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (size_t i = 0; i < gpu_cases().size(); ++i) benchmark::AddCustomContext("case" + std::to_string(i), gpu_cases()[i].name);
  const DeviceSelection sel = select_device(DeviceChoice::Auto);
  benchmark::AddCustomContext("device", sel.gpu ? sel.describe() : "none: " + sel.reason);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
