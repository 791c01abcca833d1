// What the JIT's own work costs (Google Benchmark), for docs/observability.md
// and the paper's tables; experiments/harness/run_jit_bench.py runs it and
// writes experiments/results/jit-costs-*.md.
//
//   BM_Dispatch/N          the interpreter alone: a loop of N iterations whose
//                          body is 16 statements `s = s + k`; time per statement
//   BM_Record/B            recording a loop trace of a body of B statements:
//                          the JIT's own clock around recording (manual time),
//                          per recorded IR instruction in the counters
//   BM_Compile/B/TIER      compiling that trace with asmjit (1) or LLVM (2),
//                          async=0: the compile time per trace (manual time)
//   BM_Exit/SIDE           a loop whose branch leaves its trace every other
//                          iteration: with side traces off (0) every exit goes
//                          back to the interpreter and enters the trace again;
//                          with them (1) none does. The harness takes the
//                          difference per exit: the cost of a deopt round trip
//   BM_KernelCompile/CASE  compiling a fused region's K2 kernel (kernel IR to
//                          object code, LLVM)
//   BM_Observe/MODE        a program with traces, side exits and a fused call
//                          under each observability setting: 0 none; 1 an
//                          event log installed with nothing on (what a run
//                          without --jit-log, --dump or --metrics pays: the
//                          checks); 2 --jit-log (to memory); 3 --metrics
//                          (every trace entry and fused call timed); 4 --dump's
//                          timeline (written to /dev/null) and --metrics
//
//   cmake --build build --target jit_bench && build/experiments/micro/jit_bench
#include <benchmark/benchmark.h>

#include <sstream>
#include <string>

#include "runtime/kernels/cpu_target.h"
#include "codegen/kernel/lower_region.h"
#include "experiments/micro/bench_regions.h"
#include "runtime/hotspot_observer.h"
#include "runtime/jit_event_log.h"
#include "vm/graph/region.h"
#include "vm/interp/vm.h"

namespace {

using namespace tessera;

// Runs `source` in a fresh VM with `rt` (null: the interpreter alone).
void run(const std::string& source, HotspotObserver* rt) {
  std::ostringstream out, err;
  VMOptions opts;
  opts.out = &out;
  opts.err = &err;
  VM vm(opts);
  if (rt) {
    rt->set_script_name("bench.tsb");
    rt->enable_tracing(vm);
    vm.set_jit_hooks(rt);
  }
  if (vm.run_source("bench.tsb", source) != RunStatus::Ok) throw std::runtime_error("benchmark script failed: " + err.str());
}

// A loop of `iterations` whose body is `statements` lines of scalar arithmetic.
std::string loop_program(int64_t iterations, int64_t statements) {
  std::string s = "let s = 0\nlet t = 1\nfor i in range(" + std::to_string(iterations) + ") {\n";
  for (int64_t k = 0; k < statements; ++k)
    s += k % 2 ? "  s = s + (i * " + std::to_string(k + 1) + ") % 7\n" : "  t = t + s - " + std::to_string(k) + "\n";
  return s + "}\nprint(s + t)\n";
}

void BM_Dispatch(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::string src = "let s = 0\nfor i in range(" + std::to_string(n) + ") {\n";
  for (int k = 0; k < 16; ++k) src += "  s = s + " + std::to_string(k) + "\n";
  src += "}\nprint(s)\n";
  for (auto _ : state) run(src, nullptr);
  state.SetItemsProcessed(state.iterations() * n * 16);  // statements
}

// The traces of one run of the loop program under `params`.
jit::TraceStats traced_run(const std::string& src, const std::string& tier) {
  JitParams p;
  p.set("async=0");
  p.set("tier=" + tier);
  p.set("hotloop=2");
  HotspotObserver rt(p);
  run(src, &rt);
  return rt.tracing()->stats();
}

void BM_Record(benchmark::State& state) {
  const std::string src = loop_program(50, state.range(0));
  double ir = 0, ms = 0;
  for (auto _ : state) {
    const jit::TraceStats s = traced_run(src, "1");
    state.SetIterationTime(s.record_ms / 1e3);
    ir += static_cast<double>(s.ir_recorded);
    ms += s.record_ms;
  }
  state.counters["ir_recorded"] = ir / static_cast<double>(state.iterations());
  state.counters["ns_per_ir"] = ir > 0 ? ms * 1e6 / ir : 0;
}

void BM_Compile(benchmark::State& state) {
  const std::string src = loop_program(50, state.range(0));
  const int tier = static_cast<int>(state.range(1));
  double ir = 0, bytes = 0;
  for (auto _ : state) {
    const jit::TraceStats s = traced_run(src, std::to_string(tier));
    const size_t k = static_cast<size_t>(tier - 1);
    if (s.tier_compiled[k] == 0) {
      state.SkipWithError("no trace was compiled");
      return;
    }
    state.SetIterationTime(s.tier_compile_ms[k] / static_cast<double>(s.tier_compiled[k]) / 1e3);
    ir += static_cast<double>(s.ir_instructions) / static_cast<double>(s.compiled);
    bytes += static_cast<double>(s.tier_code_bytes[k]) / static_cast<double>(s.tier_compiled[k]);
  }
  state.counters["ir"] = ir / static_cast<double>(state.iterations());
  state.counters["code_bytes"] = bytes / static_cast<double>(state.iterations());
}

void BM_Exit(benchmark::State& state) {
  constexpr int64_t kIterations = 20000;
  const std::string src = "let s = 0\nfor i in range(" + std::to_string(kIterations) +
                          ") {\n  if i % 2 == 0 { s = s + 1 } else { s = s - 2 }\n}\nprint(s)\n";
  JitParams p;
  p.set("async=0");
  p.set("tier=1");
  if (state.range(0) == 0) p.set("maxside=0");
  double exits = 0;
  for (auto _ : state) {
    HotspotObserver rt(p);
    run(src, &rt);
    uint64_t n = 0;
    for (const auto& t : rt.tracing()->traces()) n += t->exits.total();
    exits += static_cast<double>(n);
  }
  state.counters["exits"] = exits / static_cast<double>(state.iterations());
}

void BM_KernelCompile(benchmark::State& state) {
  using namespace tessera::bench_regions;
  static kernels::KernelStore store;
  static kernels::CpuTarget cpu(store);
  const char* regions[] = {kChain, kSoftmaxRms};
  const kir::Kernel k = kir::lower_region(parse_region(regions[state.range(0)]), "region");
  for (auto _ : state) benchmark::DoNotOptimize(cpu.compiler().compile_object(k, "k").bytes.size());
  state.SetLabel(state.range(0) == 0 ? "elementwise chain (11 ops)" : "softmax + rms_norm rows");
}

void BM_Observe(benchmark::State& state) {
  const std::string src =
      "let s = 0\nfor i in range(20000) {\n  if i % 3 == 0 { s = s + 2 } else { s = s + 1 }\n}\n"
      "let x = arange(256, dtype=f32) * 0.01\nlet acc = 0.0\n"
      "for j in range(400) { acc = acc + item(sum(tanh(x * 1.5 + x) * 2.0)) }\nprint(s, acc > 0)\n";
  const int mode = static_cast<int>(state.range(0));
  JitParams p;
  // kcache=1: the first run compiles the kernel, the others (each VM has a
  // kernel store of its own) link it from the kernel cache.
  p.set("kcache=1");
  p.set("tier=1");    // no LLVM compile in the background to come and go between runs
  for (auto _ : state) {
    std::ostringstream log;
    HotspotObserver rt(p);
    if (mode > 0) {
      auto events = std::make_shared<jit::JitEventLog>();
      if (mode == 2) events->log_to(log);
      if (mode == 3) events->keep_tally();
      if (mode == 4) {
        events->keep_timeline("/dev/null", "bench");
        events->keep_tally();
      }
      rt.set_event_log(events);
    }
    run(src, &rt);
  }
  static const char* kModes[] = {"no event log", "an event log, nothing on", "--jit-log", "--metrics",
                                 "--dump's timeline and --metrics"};
  state.SetLabel(kModes[mode]);
}

}  // namespace

BENCHMARK(BM_Dispatch)->Arg(20000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Record)->Arg(4)->Arg(16)->Arg(64)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Compile)
    ->ArgsProduct({{4, 16, 64}, {1, 2}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Exit)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_KernelCompile)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Observe)->DenseRange(0, 4)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
