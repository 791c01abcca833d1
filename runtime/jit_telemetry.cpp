#include "runtime/kernels/kernel_runtime.h"
#include "runtime/jit_telemetry.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <ostream>

#include <unistd.h>  // getpid, for the perf map

#include "vm/graph/region.h"

namespace tessera::jit {

JitTelemetry::JitTelemetry(std::string script_name, std::string dump_dir, bool perf_map)
    : script_name_(std::move(script_name)),
      dump_dir_(std::move(dump_dir)),
      perf_map_enabled_(perf_map),
      created_ms_(now_ms()) {}

std::optional<std::array<double, 3>> JitTelemetry::tier_cpu_ms() const {
  if (!profile_) return std::nullopt;
  return profile_->cpu_ms();
}

namespace {

// ", N values in registers": what a side trace takes from its parent's exit
// in registers (trace_abi.h), if anything.
std::string passed_note(const TraceIR& ir) {
  const auto n = std::count_if(ir.instructions().begin(), ir.instructions().end(),
                               [](const IRIns& in) { return sload_passed(in); });
  if (n == 0) return "";
  return fmt::format(", {} value{} in registers", n, n == 1 ? "" : "s");
}

}  // namespace

void JitTelemetry::enable_tier_profile() {
  if (profile_) return;
  profile_ = std::make_unique<TierProfile>();
  if (!profile_->start()) profile_.reset();  // another VM profiles, or no timer: no tier times
}

void JitTelemetry::note_compiled(Trace& t, const CompiledTrace& code, int tier, double started_ms, double finished_ms,
                                 bool background) {
  if (JitTimeline* tl = timeline())
    tl->span(background ? JitTimeline::Track::Compiler : JitTimeline::Track::VM, fmt::format("T{} compile", tier),
             "compile", started_ms, finished_ms,
             {{"trace", static_cast<int64_t>(t.id)}, {"bytes", static_cast<int64_t>(code.code_size)}});
  const size_t k = static_cast<size_t>(tier - 1);
  t.code_text[k] = code.text;
  if (!code.object.empty()) t.code_object = code.object;
  if (!code.disassembly.empty()) t.code_disassembly = code.disassembly;
  t.code_size[k] = code.code_size;
  t.tier_compile_ms[k] = code.compile_ms;
  if (logging())
    event(JitEventKind::TraceCompiled, {{"trace", static_cast<int64_t>(t.id)},
                                        {"tier", static_cast<int64_t>(tier)},
                                        {"ms", code.compile_ms},
                                        {"bytes", static_cast<int64_t>(code.code_size)}});
  t.compile_ms += code.compile_ms;  // after the optimizer's share
  stats_.compile_ms += code.compile_ms;
  ++stats_.tier_compiled[k];
  stats_.tier_compile_ms[k] += code.compile_ms;
  stats_.tier_code_bytes[k] += code.code_size;
  stats_.tier_compile_samples[k].push_back(code.compile_ms);
  if (profile_) profile_->add_code(code.code_begin, code.code_size, tier, t.id);
  if (perf_map_enabled_ && code.code_size > 0) {
    // perf's JIT symbol file: "START SIZE NAME" per line, hex, appended as
    // code appears (T2's start is an estimate: CompiledTrace::code_begin).
    if (!perf_map_.is_open())
      perf_map_.open(fmt::format("/tmp/perf-{}.map", static_cast<long>(getpid())), std::ios::app);
    perf_map_ << fmt::format("{:x} {:x} tessera:{}:{}:trace{}:T{}\n", reinterpret_cast<uintptr_t>(code.code_begin),
                             code.code_size, std::filesystem::path(script_name_).filename().string(), t.line, t.id,
                             tier)
              << std::flush;
  }
}

void JitTelemetry::note_installed() {
  ++stats_.compiled;
  stats_.last_trace_ms = now_ms() - created_ms_;
  if (stats_.first_trace_ms < 0) stats_.first_trace_ms = stats_.last_trace_ms;
}

namespace {
constexpr size_t kMaxDumpStem = 64;
}  // namespace

void JitTelemetry::dump(const Trace& t) const {
  if (!dumping()) return;
  std::error_code ec;
  std::filesystem::create_directories(dump_dir_, ec);
  std::string stem = std::filesystem::path(script_name_).stem().string();
  // File names stay well under NAME_MAX (255) whatever the script is called.
  if (stem.size() > kMaxDumpStem) stem.resize(kMaxDumpStem);
  std::string base = fmt::format("{}/{}-{}-trace{}", dump_dir_, stem, t.line, t.id);
  std::lock_guard<std::mutex> lock(dump_mu_);
  dump_error_.write(base + ".ir",
                    fmt::format("-- trace {} of {}:{} ({})\n", t.id, script_name_, t.line, t.function) + print_ir(t.ir));
  // The code of each tier compiled so far: T1's assembly, T2's LLVM IR and
  // its object file (machine code: objdump -d).
  if (!t.code_text[0].empty()) dump_error_.write(base + ".s", t.code_text[0]);
  if (!t.code_text[1].empty()) dump_error_.write(base + ".ll", t.code_text[1]);
  if (!t.code_object.empty()) dump_error_.write(base + ".o", t.code_object, true);
  if (!t.code_disassembly.empty()) dump_error_.write(base + ".t2.s", t.code_disassembly);
  // -print-after-all style: the IR as recorded, then after each pass.
  for (size_t k = 0; k < t.pass_ir.size(); ++k)
    dump_error_.write(fmt::format("{}.{}-{}.ir", base, k, t.pass_ir[k].first), t.pass_ir[k].second);
}

std::string JitTelemetry::dump_error() const {
  std::lock_guard<std::mutex> lock(dump_mu_);
  return dump_error_.error();
}

void JitTelemetry::note_dump_error(const std::string& error) {
  std::lock_guard<std::mutex> lock(dump_mu_);
  dump_error_.note(error);
}

void JitTelemetry::print_stats(std::ostream& os, const std::vector<std::unique_ptr<Trace>>& traces,
                               const kernels::KernelCallStats& k) const {
  uint64_t aborted = 0;
  for (uint64_t a : stats_.aborts) aborted += a;
  auto count = [](uint64_t n, const char* noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); };
  os << fmt::format("  traces: {} recorded, {} compiled ({}; {} linked to one), {} aborted, {} and {} blacklisted, "
                    "{} invalidated\n",
                    stats_.recorded, stats_.compiled, count(stats_.side_traces, "side trace"),
                    count(stats_.shared_exits, "more exit"), aborted,
                    count(stats_.blacklisted_loops, "loop"), count(stats_.blacklisted_functions, "function"),
                    stats_.invalidated);
  for (int r = 0; r < kNumAbortReasons; ++r)
    if (stats_.aborts[r])
      os << fmt::format("    aborted ({}): {}{}\n", abort_reason_message(static_cast<AbortReason>(r)),
                        stats_.aborts[r],
                        stats_.last_abort[r].empty() ? "" : " (last " + stats_.last_abort[r] + ")");
  os << fmt::format("  time: recording {:.3f} ms, compiling {:.3f} ms; {} IR instructions ({} as recorded; "
                    "optimizer {:.3f} ms of the compiling time)\n",
                    stats_.record_ms, stats_.compile_ms, stats_.ir_instructions, stats_.ir_recorded,
                    stats_.optimize_ms);
  if (stats_.compiled > 0) {
    // What allocation sinking took off the compiled traces (optimizer/tensor_sink.h, alloc_sink.h).
    size_t tensors = 0, lists = 0;
    for (const auto& t : traces)
      for (const IRIns& in : t->ir.instructions()) {
        tensors += in.op == IROp::VNEWTENSOR;
        lists += in.op == IROp::VNEWLIST;
      }
    os << fmt::format("  allocation sinking: not allocated by the compiled traces: tensors {}, lists {}\n", tensors,
                      lists);
    // What fusion made of them (optimizer/fusion.h): kernel calls in the
    // traces, the operations they took in (whose intermediate tensors are
    // never allocated), and what ran them on the CPU (the VM's kernel
    // runtime: runtime/kernels/kernel_runtime.h).
    size_t kernels = 0, row_kernels = 0, fused_ops = 0;
    for (const auto& t : traces)
      for (const IRIns& in : t->ir.instructions())
        if (const Region* region = in.op == IROp::CALL ? t->ir.calls()[in.op2].kernel_region() : nullptr) {
          ++kernels;
          row_kernels += region->has_row_ops();
          fused_ops += region->ops.size();
        }
    if (kernels > 0) {
      os << fmt::format(
          "  fusion: {} kernel call{} in the traces ({} elementwise, {} with reductions or norms), computing {} "
          "tensor operations; {} intermediate tensors not allocated by the kernels' runs\n",
          kernels, kernels == 1 ? "" : "s", kernels - row_kernels, row_kernels, fused_ops, k.tensors_not_allocated);
      os << fmt::format(
          "  kernels: K2 {}, K3 {} (promotions {}, recompiles {}, dynamic dims {}, sites at the recompile limit {}); "
          "calls run by K2 {}, by K3 {}, by the interpreter's kernels {}{}\n",
          k.k2_kernels, k.k3_kernels, k.promotions, k.recompiles, k.dynamic_dims, k.capped, k.k2_runs, k.k3_runs,
          k.reference_runs, k.compile_failures
              ? fmt::format(" ({} refused by the emitter, the first: {})", k.compile_failures, k.first_failure)
              : "");
      os << fmt::format("  kernel compiles: {} in {:.3f} ms (median {:.3f} ms), {} linked from the cache in {:.3f} ms, "
                        "K3 tuning {:.3f} ms; kernel cache {}: hits {}, misses {}, corrupt {}, writes {}{}\n",
                        k.compiled, k.compile_ms, k.compile_median_ms, k.from_cache, k.load_ms, k.tune_ms,
                        k.cache_dir.empty() ? "off" : k.cache_dir, k.cache_hits, k.cache_misses, k.cache_corrupt,
                        k.cache_writes,
                        k.cache_write_failures
                            ? fmt::format(" ({} failed: is the directory writable?)", k.cache_write_failures)
                            : "");
    }
  }
  static constexpr const char* kTierNames[2] = {"T1 (asmjit)", "T2 (llvm)"};
  for (size_t k = 0; k < 2; ++k) {
    if (stats_.tier_compiled[k] == 0) continue;
    std::vector<double> v = stats_.tier_compile_samples[k];
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    os << fmt::format("  {}: {} traces compiled in {:.3f} ms (median {:.3f} ms), {} bytes of code\n", kTierNames[k],
                      stats_.tier_compiled[k], stats_.tier_compile_ms[k], v[v.size() / 2], stats_.tier_code_bytes[k]);
  }
  if (stats_.abandoned_compiles)
    os << "  T2 (llvm): the compile in progress when the script ended was not waited for\n";
  if (profile_) {
    // The process's CPU time (the background compiler's included, under
    // "elsewhere") up to now, split as the samples fell.
    const auto ms = profile_->cpu_ms();
    const auto s = profile_->samples();
    const double total = ms[0] + ms[1] + ms[2];
    auto share = [&](double x) { return total > 0 ? 100.0 * x / total : 0.0; };
    os << fmt::format("  time in code (CPU time, split by {} samples): T1 {:.0f} ms ({:.1f}%), T2 {:.0f} ms ({:.1f}%), "
                      "elsewhere {:.0f} ms ({:.1f}%: interpreter, recorder, compilers, runtime)\n",
                      s[0] + s[1] + s[2], ms[1], share(ms[1]), ms[2], share(ms[2]), ms[0], share(ms[0]));
  }
  if (stats_.tier_up_exits > 0)
    os << fmt::format("  tier-up: {} T1 traces swapped for T2 code ({} tier-up exits)\n", stats_.upgrades,
                      stats_.tier_up_exits);
  if (stats_.first_trace_ms >= 0)
    os << fmt::format("  warm-up: first trace compiled at {:.3f} ms, last at {:.3f} ms\n",
                      stats_.first_trace_ms, stats_.last_trace_ms);
  for (const auto& t : traces) {
    const uint64_t exits = t->exits.total();
    std::string kind = t->peer      ? fmt::format("peer loop trace of {} (exit #{}: other types)", t->parent, t->parent_snap)
                       : t->is_side ? fmt::format("side trace of {} (exit #{}{})", t->parent, t->parent_snap,
                                                  passed_note(t->ir))
                       : t->kind == Trace::Kind::Function ? std::string("function trace")
                                                          : std::string("root trace");
    if (t->link >= 0) kind += fmt::format(", links to {}", t->link);
    if (t->pending) kind += ", still compiling when the run ended";
    else if (t->dead) kind += t->fn ? ", invalidated" : ", not compiled";
    std::string tiers;
    for (size_t k = 0; k < 2; ++k)
      if (t->code_size[k] > 0)
        tiers += fmt::format("{}T{} {:.3f} ms {} bytes", tiers.empty() ? "" : ", ", k + 1, t->tier_compile_ms[k],
                             t->code_size[k]);
    os << fmt::format("    trace {}  {}:{} in {}, {}: {} IR instructions ({} recorded), {} snapshots, compiled in "
                      "{:.3f} ms{}; entered {} times, {} exits{}\n",
                      t->id, t->file.empty() ? script_name_ : t->file, t->line, t->function, kind, t->ir.size(), t->recorded_size,
                      t->ir.snapshots().size(), t->compile_ms,
                      tiers.empty() ? "" : fmt::format(" ({}; runs T{})", tiers, t->tier), t->entries, exits,
                      t->returns_taken ? fmt::format(", {} returns", t->returns_taken) : "");
    for (size_t s = 0; s < t->exits.size(); ++s)
      if (t->exits[s])
        os << fmt::format("      exit #{} to line {}: {} times\n", s, t->exit_lines[s], t->exits[s]);
  }
}

void JitTelemetry::log_exit_counts(const std::vector<std::unique_ptr<Trace>>& traces) const {
  if (!logging()) return;
  for (const auto& t : traces)
    for (size_t s = 0; s < t->exits.size(); ++s)
      if (t->exits[s])
        event(JitEventKind::ExitCount, {{"trace", static_cast<int64_t>(t->id)},
                                        {"exit", static_cast<int64_t>(s)},
                                        {"taken", static_cast<int64_t>(t->exits[s])}});
}

}  // namespace tessera::jit
