#include "runtime/tier_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "codegen/host/asmjit/asmjit_backend.h"

namespace tessera::jit {

namespace {

// The name of a trace's code in dumps, the perf map and backend errors.
std::string code_name(const Trace& t) {
  return fmt::format("trace{}_{}_{}", t.id, t.function == "<main>" ? "main" : t.function, t.line);
}

// Creates a backend with its first trace, once.
template <class Backend, class... Args>
Backend& created(std::unique_ptr<Backend>& backend, bool keep_text, Args... args) {
  if (!backend) {
    backend = std::make_unique<Backend>(args...);
    backend->set_keep_text(keep_text);
  }
  return *backend;
}

// A tier-up counter that never reaches zero in practice: no more polls.
constexpr uint32_t kNoMorePolls = std::numeric_limits<uint32_t>::max();

// IR instructions per `tier2` of a trace's tier-up count. LLVM's time grows
// with a trace's size, faster than linearly with its exits (from about 5 ms
// for 20 instructions to 270 ms for 900 with 300 snapshots, memo_paths in
// the corpus): a large trace must run longer before that pays, and a short
// program should not end waiting for the compile of a trace it has left.
constexpr size_t kTierUpInsPerBudget = 100;

}  // namespace

uint32_t tier_up_count(uint32_t tier2, size_t ir_size) {
  const uint64_t scaled = uint64_t{tier2} * std::max<size_t>(1, ir_size / kTierUpInsPerBudget);
  return static_cast<uint32_t>(std::min<uint64_t>(scaled, 1u << 30));
}

TierPolicy::TierPolicy(const JitParams& params, TraceRegistry& registry, JitTelemetry& telemetry)
    : tier_(params.tier),
      tier2_(static_cast<uint32_t>(params.tier2)),
      async_(params.async != 0),
      t2_delay_(params.t2delay),
      registry_(registry),
      telemetry_(telemetry) {}

TierPolicy::~TierPolicy() { worker_.reset(); }

AsmjitBackend& TierPolicy::t1_backend() { return created(t1_backend_, telemetry_.dumping()); }
LlvmBackend& TierPolicy::t2_backend() { return created(t2_backend_, telemetry_.dumping(), 2); }

CompileWorker& TierPolicy::worker() {
  if (!worker_) worker_ = std::make_unique<CompileWorker>(std::chrono::milliseconds(t2_delay_));
  return *worker_;
}

CompileWorker::Job TierPolicy::t2_job(Trace& t) const {
  ExitLinking linking = TraceRegistry::exit_linking(t);
  if (t.tier == 1 && t.passed_links) {
    // An upgrade: the exits that go into a side trace taking passed values
    // now keep that path; the others write everything (trace_abi.h).
    t.upgrade_passed_exits.assign(t.ir.snapshots().size(), 0);
    for (size_t k = 0; k < t.upgrade_passed_exits.size(); ++k)
      t.upgrade_passed_exits[k] = t.passed_links[k] != nullptr;
    linking.passed_exits = t.upgrade_passed_exits.data();
  }
  return CompileWorker::Job{t.id, &t.ir, code_name(t), linking, t.proto, registry_.global_watch(),
                            telemetry_.dumping()};
}

CompileResult TierPolicy::compile_t1(Trace& t) {
  return try_compile(t.id, [&] {
    uint32_t* counter = nullptr;
    if (tier_ == 0) {
      t.tier_up_counter = tier_up_count(tier2_, t.ir.size());
      counter = &t.tier_up_counter;
    }
    return t1_backend().compile(t.ir, code_name(t), TraceRegistry::exit_linking(t), t.proto,
                                registry_.global_watch(), counter);
  });
}

CompileResult TierPolicy::compile_t2_now(Trace& t) {
  return try_compile(t.id, [&] { return t2_job(t).compile_with(t2_backend()); });
}

std::optional<CompileFailure> TierPolicy::compile(Trace& t) {
  // T1: asmjit takes microseconds, so it always compiles right here.
  if (tier_ != 2) {
    CompileResult r = compile_t1(t);
    return install(t, r, 1);
  }
  if (async_) {
    // LLVM works on its own thread; the interpreter goes on, and the trace
    // is installed at the next safe point after it is done.
    t.pending = true;
    worker().submit(t2_job(t));
    return std::nullopt;
  }
  CompileResult r = compile_t2_now(t);
  return install(t, r, 2);
}

std::optional<CompileFailure> TierPolicy::install(Trace& t, CompileResult& r, int tier) {
  if (!r.error.empty()) {
    TraceRegistry::drop(t);
    return CompileFailure{&t, tier == 1 ? AbortReason::CompileFailedT1 : AbortReason::CompileFailedT2,
                          std::move(r.error)};
  }
  t.pending = false;
  registry_.set_code(t, r.code, tier);
  telemetry_.note_compiled(t, r.code, tier, r.started_ms, r.finished_ms, r.background);
  if (registry_.stale(t)) {
    if (!t.dead) ++telemetry_.stats().invalidated;
    t.dead = true;
    return std::nullopt;
  }
  telemetry_.note_installed();
  registry_.link(t);
  if (t.is_side) ++telemetry_.stats().side_traces;
  telemetry_.dump(t);
  return std::nullopt;
}

std::vector<CompileFailure> TierPolicy::install_finished() {
  std::vector<CompileFailure> failed;
  if (!worker_) return failed;
  for (CompileResult& r : worker_->take_finished()) {
    Trace& t = registry_[r.trace_id];
    if (t.upgrade == Trace::Upgrade::Queued) finish_upgrade(t, r);
    else if (auto f = install(t, r, 2)) failed.push_back(std::move(*f));
  }
  return failed;
}

void TierPolicy::tier_up(Trace& t) {
  ++telemetry_.stats().tier_up_exits;
  // Poll again while LLVM works (the T1 code keeps running until the T2
  // code is there), each time after twice as many iterations: every poll is
  // a trip through the interpreter, and a hot loop would otherwise take one
  // per `tier2` iterations for as long as the compile queue is long.
  t.tier_up_interval = t.tier_up_interval == 0 ? tier_up_count(tier2_, t.ir.size())
                                               : std::min<uint32_t>(t.tier_up_interval, 1u << 30) * 2;
  t.tier_up_counter = t.tier_up_interval;
  if (t.upgrade == Trace::Upgrade::Queued && async_) worker().prioritize(t.id);  // still hot: next
  if (t.upgrade != Trace::Upgrade::None || t.dead) return;
  if (telemetry_.logging()) telemetry_.event(JitEventKind::TierUp, {{"trace", static_cast<int64_t>(t.id)}});
  if (async_) {
    t.upgrade = Trace::Upgrade::Queued;
    worker().submit(t2_job(t));
    return;
  }
  // async=0: LLVM compiles now, and the program goes on in T2 (reproducible).
  CompileResult r = compile_t2_now(t);
  finish_upgrade(t, r);
}

void TierPolicy::finish_upgrade(Trace& t, CompileResult& r) {
  t.tier_up_counter = kNoMorePolls;
  if (!r.error.empty()) {
    t.upgrade = Trace::Upgrade::Failed;
    telemetry_.stats().count_abort(AbortReason::TierUpFailed, std::move(r.error));
    return;
  }
  telemetry_.note_compiled(t, r.code, 2, r.started_ms, r.finished_ms, r.background);
  t.upgrade = Trace::Upgrade::Done;
  if (t.dead) return;  // invalidated while LLVM worked
  // Safe point: no trace runs. Everything that entered or linked to the T1
  // code now goes to the T2 code; the T1 code stays mapped (unused).
  const NativeTrace t1_code = t.native, t1_passed = t.native_passed;
  registry_.set_code(t, r.code, 2);
  registry_.retarget(t1_code, t.native);
  registry_.retarget(t1_passed, t.native_passed);
  ++telemetry_.stats().upgrades;
  if (telemetry_.logging()) telemetry_.event(JitEventKind::Upgraded, {{"trace", static_cast<int64_t>(t.id)}});
  telemetry_.dump(t);
}

}  // namespace tessera::jit
