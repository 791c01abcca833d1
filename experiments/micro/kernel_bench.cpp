// CPU kernels generated from the kernel IR (codegen/kernel/cpu), as Google
// Benchmarks: compile latency of a kernel, and the run time of the
// elementwise chain of the tensor suite
//   tanh(y * 1.3 + x) * sigmoid(y - 0.2) * 1.7 + x * 0.05   on 1M floats
// as one fused kernel (one thread and all threads) against the same chain
// done the interpreter's way, one vectorized pass per operation
// (vm/tensor/vector_math.h). bytes_per_second counts the fewest bytes the
// chain must move (x and y read, the result written).
//
//   cmake --build build --target kernel_bench && build/experiments/micro/kernel_bench
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "codegen/kernel/cpu/cpu_compiler.h"
#include "codegen/kernel/cpu/cpu_launch.h"
#include "vm/tensor/vector_math.h"

namespace {

using namespace tessera::kir;
using tessera::Binary;
using tessera::Unary;

constexpr int64_t kN = 1 << 20;
constexpr int64_t kTile = 256;

Kernel chain_kernel() {
  Kernel k;
  k.name = "chain";
  k.dims = {"N"};
  k.params = {Param{"x", Elem::F32, {{0, 0}}, false}, Param{"y", Elem::F32, {{0, 0}}, false},
              Param{"o", Elem::F32, {{0, 0}}, true}};
  k.grid = {Extent{1, {0}, kTile}};
  KernelBuilder b(k);
  auto c = [&](double v) { return b.splat(b.const_float(v), {kTile}); };
  ValueId off = b.binary(KOp::Add, b.splat(b.binary(KOp::Mul, b.program_id(0), b.const_int(kTile)), {kTile}), b.range(kTile));
  ValueId in = b.cmp(Pred::Lt, off, b.splat(b.dim(0), {kTile}));
  ValueId x = b.load(0, off, in), y = b.load(1, off, in);
  ValueId t = b.unary(KOp::Tanh, b.binary(KOp::Add, b.binary(KOp::Mul, y, c(1.3)), x));
  ValueId s = b.unary(KOp::Sigmoid, b.binary(KOp::Sub, y, c(0.2)));
  ValueId r = b.binary(KOp::Add, b.binary(KOp::Mul, b.binary(KOp::Mul, t, s), c(1.7)), b.binary(KOp::Mul, x, c(0.05)));
  b.store(2, off, r, in);
  return k;
}

std::vector<float> wave(int64_t n, float f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = 0.5f * std::sin(f * static_cast<float>(i));
  return v;
}

void BM_CompileChain(benchmark::State& state) {
  CpuKernelCompiler compiler;
  Kernel k = chain_kernel();
  for (auto _ : state) benchmark::DoNotOptimize(compiler.compile(k).fn);
}
BENCHMARK(BM_CompileChain)->Unit(benchmark::kMillisecond);

void BM_FusedChain(benchmark::State& state) {
  static CpuKernelCompiler compiler;
  Kernel k = chain_kernel();
  KernelFn fn = compiler.compile(k).fn;
  std::vector<float> x = wave(kN, 0.37f), y = wave(kN, 0.11f), o(kN);
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) launch(k, fn, {x.data(), y.data(), o.data()}, {kN}, threads);
  state.SetBytesProcessed(state.iterations() * 3 * kN * 4);
}
BENCHMARK(BM_FusedChain)->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The interpreter's way: one pass per operation, each into a new array.
void BM_OpByOpChain(benchmark::State& state) {
  const auto& vm = tessera::vmath::table();
  std::vector<float> x = wave(kN, 0.37f), y = wave(kN, 0.11f);
  const float c13 = 1.3f, c02 = 0.2f, c17 = 1.7f, c005 = 0.05f;
  for (auto _ : state) {
    std::vector<float> a(kN), b(kN), c(kN), d(kN), e(kN), f(kN), g(kN), h(kN), o(kN);
    vm.binary(Binary::Mul, y.data(), false, &c13, true, a.data(), kN);
    vm.binary(Binary::Add, a.data(), false, x.data(), false, b.data(), kN);
    vm.unary(Unary::Tanh, b.data(), c.data(), kN);
    vm.binary(Binary::Sub, y.data(), false, &c02, true, d.data(), kN);
    vm.unary(Unary::Sigmoid, d.data(), e.data(), kN);
    vm.binary(Binary::Mul, c.data(), false, e.data(), false, f.data(), kN);
    vm.binary(Binary::Mul, f.data(), false, &c17, true, g.data(), kN);
    vm.binary(Binary::Mul, x.data(), false, &c005, true, h.data(), kN);
    vm.binary(Binary::Add, g.data(), false, h.data(), false, o.data(), kN);
    benchmark::DoNotOptimize(o.data());
  }
  state.SetBytesProcessed(state.iterations() * 3 * kN * 4);
}
BENCHMARK(BM_OpByOpChain)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
