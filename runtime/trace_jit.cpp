#include "runtime/trace_jit.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "tracer/exit_slot_types.h"
#include "tracer/ir_value_tags.h"
#include "vm/core/nvtx_ranges.h"
#include "vm/interp/vm.h"

#if !(defined(__GNUC__) && (defined(__x86_64__) || defined(__aarch64__)))
#include <pthread.h>
#endif

namespace tessera::jit {

namespace {

// The calling thread, as an address no other live thread has: the thread
// pointer where the compiler reads it in one instruction (glibc's
// pthread_self is that same value, behind a call through the PLT).
const void* this_thread_id() {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__aarch64__))
  return __builtin_thread_pointer();
#else
  return reinterpret_cast<const void*>(pthread_self());
#endif
}

}  // namespace

TraceJit::TraceJit(VM& vm, const JitParams& params, kernels::KernelRuntime& kernels, std::string script_name,
                   std::string dump_dir, std::shared_ptr<JitEventLog> events)
    : vm_(vm),
      params_(params),
      kernels_(kernels),
      optimizer_(TracePipeline::Options(params)),
      exit_policy_(ExitPolicy::Params{.hotexit = static_cast<uint32_t>(params.hotexit),
                                      .maxside = static_cast<uint32_t>(params.maxside),
                                      .maxsidetries = static_cast<uint32_t>(params.maxsidetries)}),
      blacklist_(Blacklist::Params{.blacklist = static_cast<uint32_t>(params.blacklist),
                                   .hotloop = static_cast<uint32_t>(params.hotloop),
                                   .hotcall = static_cast<uint32_t>(params.hotcall)}),
      telemetry_(std::move(script_name), std::move(dump_dir), params.perfmap != 0),
      tiers_(params, registry_, telemetry_) {
  nvtx_attached_ = nvtx::attached();
  entry_ctx_.vm = &vm_;
  entry_ctx_.jit = this;
  entry_ctx_.fused = &kernels_;
  entry_ctx_.global_stored = [](void* jit, uint32_t index) { static_cast<TraceJit*>(jit)->invalidate_global(index); };
  telemetry_.set_events(std::move(events));
  registry_.set_pass_registers(params.passregs != 0);
  kernels::KernelRuntimeConfig k;
  k.specialize = static_cast<int>(params.specialize);
  k.recompiles = static_cast<int>(params.recompiles);
  k.hot_calls = static_cast<int>(params.k3calls);
  k.hot_ms = static_cast<double>(params.k3time) / 1000.0;
  k.background = params.async != 0;
  if (params.kcache) k.cache_dir = kir::KernelDiskCache::default_dir();
  k.dump_dir = telemetry_.dump_dir();
  kernels_.configure(k);
}

RecorderLimits TraceJit::limits() const {
  RecorderLimits limits;
  limits.maxrecord = static_cast<uint32_t>(params_.maxrecord);
  limits.maxinline = static_cast<uint32_t>(params_.maxinline);
  limits.stored_globals = stored_globals_;
  return limits;
}

bool TraceJit::may_record(const RootKey& root) {
  if (recorder_) return false;  // already recording (a nested loop got hot)
  install_finished();           // may patch this very back-edge
  if (blacklist_.contains(root)) {
    // Refused; the cool-down that ends here lets the next hot report record.
    if (blacklist_.refused(root) && telemetry_.logging())
      telemetry_.event(JitEventKind::BlacklistRetry, {{"kind", std::string(root.is_function() ? "function" : "loop")},
                                                      {"retry", static_cast<int64_t>(blacklist_.retries(root))}});
    return false;
  }
  return !registry_.pending_root(root) && registry_.size() < static_cast<size_t>(params_.maxtrace);
}

bool TraceJit::start_recording(FunctionProto& fn, uint32_t loop_pc) {
  ++telemetry_.stats().hot_loops;
  if (!may_record(RootKey::loop(&fn, loop_pc))) return false;
  Op op = fn.code[loop_pc].op;
  if (op != Op::FORLOOP && op != Op::ITERLOOP && op != Op::LOOP) return false;
  recorder_ = std::make_unique<TraceRecorder>(&fn, loop_pc, limits());
  recorder_->set_loop_trace_choice(loop_trace_choice());
  record_start_ms_ = now_ms();
  if (telemetry_.logging()) log_record_start("loop", source_line(fn, loop_pc));
  return true;
}

void TraceJit::log_record_start(const char* kind, int line, EventFields more) {
  record_at_ = telemetry_.where(line);
  EventFields f{{"kind", std::string(kind)}, {"at", record_at_}};
  for (auto& m : more) f.push_back(std::move(m));
  telemetry_.event(JitEventKind::RecordStart, std::move(f));
}

bool TraceJit::start_function_recording(FunctionProto& fn) {
  ++telemetry_.stats().hot_functions;
  if (!may_record(RootKey::function(&fn)) || fn.entry_trace >= 0) return false;
  recorder_ = std::make_unique<TraceRecorder>(&fn, limits(), TraceRecorder::FunctionEntry{});
  recorder_->set_loop_trace_choice(loop_trace_choice());
  record_start_ms_ = now_ms();
  if (telemetry_.logging()) log_record_start("function", fn.line, {{"function", fn.name}});
  return true;
}

void TraceJit::watch_globals(uint8_t* watch, const Value* globals, size_t n) {
  registry_.watch_globals(watch, globals, n);
}

void TraceJit::invalidate_global(uint32_t index) {
  const uint64_t n = registry_.invalidate_global(index);
  telemetry_.stats().invalidated += n;
  if (n && telemetry_.logging())
    telemetry_.event(JitEventKind::Invalidated,
                     {{"global", static_cast<int64_t>(index)}, {"traces", static_cast<int64_t>(n)}});
}

void TraceJit::stop_compiling() {
  if (tiers_.stop(abandon_at_exit_)) ++telemetry_.stats().abandoned_compiles;
  telemetry_.log_exit_counts(registry_.all());
  if (telemetry_.dumping()) {
    for (const auto& t : registry_.all()) {  // while the module lives
      t->compiled_ir = print_ir(t->ir);
      t->provenance = ir_provenance(t->ir);
      t->snapshot_names = snapshot_local_names(t->ir, t->proto);
    }
    try {
      const std::string no_svg = write_trace_tree(
          telemetry_.dump_dir(), trace_tree_dot(registry_.all(), blacklisted_, telemetry_.script_name()));
      if (!no_svg.empty()) std::cerr << "tessera-vm: --dump: no traces.svg: " << no_svg << "\n";
    } catch (const std::exception& e) {
      telemetry_.note_dump_error(e.what());  // the run's output stands; the dump is short of a file
    }
  }
  kernels_.cancel_background();
  registry_.forget_globals();  // the interpreter's, going away with it
}

bool TraceJit::record(FunctionProto* fn, uint32_t pc, const Value* stack, size_t frame_base,
                      const Value* globals) {
  if (!recorder_) return false;
  switch (recorder_->record(fn, pc, stack, frame_base, globals)) {
    case TraceRecorder::Status::Continue: return true;
    case TraceRecorder::Status::Done: finish_recording(); return false;
    case TraceRecorder::Status::Aborted:
      abort_recording(recorder_->abort_reason(), recorder_->abort_detail());
      return false;
  }
  return false;
}

void TraceJit::recording_failed(AbortReason why) {
  if (recorder_) abort_recording(why, "");
}

void TraceJit::abort_recording(AbortReason r, const std::string& detail) {
  TraceStats& stats = telemetry_.stats();
  stats.count_abort(r, detail);
  stats.record_ms += now_ms() - record_start_ms_;
  if (JitTimeline* tl = telemetry_.timeline())
    tl->span(JitTimeline::Track::VM, "record (aborted)", "record", record_start_ms_, now_ms(),
             {{"reason", std::string(abort_reason_name(r))}});
  if (telemetry_.logging())
    telemetry_.event(JitEventKind::TraceAbort,
                     {{"reason", std::string(abort_reason_name(r))}, {"at", record_at_}, {"detail", detail}});
  // An inner loop whose trace is still being compiled: not a failure of
  // this loop or exit, just too early (no penalty; try again later). Nor is
  // a store into a global the trace assumed constant: the next recording
  // loads it with a guard.
  if (r == AbortReason::AssumedGlobalStored) stored_globals_.push_back(recorder_->stored_assumed_global());
  const bool too_early =
      (r == AbortReason::InnerLoop && registry_.any_pending()) || r == AbortReason::AssumedGlobalStored;
  if (recording_from_exit()) {
    Trace& parent = registry_[side_parent_];
    if (too_early) exit_policy_.too_early(parent.exits, side_snap_);  // another `hotexit` exits first
    else if (r == AbortReason::LeftLoop && recorder_->is_peer()) exit_policy_.retry_at_next_exit(parent.exits, side_snap_);
    else exit_policy_.failed(parent.exits, side_snap_);
    recorder_.reset();
    return;
  }
  const RootKey root{recorder_->root(), recorder_->loop_pc()};
  const int root_line =
      recorder_->loop_pc() ? source_line(*recorder_->root(), *recorder_->loop_pc()) : recorder_->root()->line;
  recorder_.reset();
  if (!too_early) root_failed(root, root_line, record_at_);
}

void TraceJit::root_failed(const RootKey& root, int line, const std::string& at) {
  if (!blacklist_.aborted(root)) return;
  TraceStats& stats = telemetry_.stats();
  ++(root.is_function() ? stats.blacklisted_functions : stats.blacklisted_loops);
  blacklisted_.push_back({root.is_function() ? "function" : "loop", line});
  if (telemetry_.logging())
    telemetry_.event(JitEventKind::Blacklist, {{"kind", std::string(root.is_function() ? "function" : "loop")}, {"at", at}});
}

std::unique_ptr<Trace> TraceJit::take_recording(double now) {
  auto trace = std::make_unique<Trace>();
  trace->id = registry_.next_id();
  if (recording_from_exit()) {
    trace->kind = Trace::Kind::Side;
    trace->is_side = true;
    trace->peer = recorder_->is_peer();
    trace->parent = side_parent_;
    trace->parent_snap = side_snap_;
    trace->root = registry_[side_parent_].root;
  } else {
    trace->kind = recorder_->is_function() ? Trace::Kind::Function : Trace::Kind::Loop;
    trace->root = trace->id;
  }
  if (recorder_->has_link()) {
    uint32_t target = recorder_->link_target();
    trace->link = static_cast<int32_t>(target == TraceRecorder::kLinkSelf ? trace->id : target);
    trace->link_snap = recorder_->link_snapshot();
  }
  trace->proto = recorder_->root();
  trace->function = trace->proto->name;
  trace->file = trace->proto->file;
  trace->loop_pc = recorder_->loop_pc();
  trace->start_pc = recorder_->start_pc();
  trace->line = trace->kind == Trace::Kind::Function ? trace->proto->line
                : source_line(recorder_->start_proto() ? *recorder_->start_proto() : *trace->proto,
                              trace->loop_pc.value_or(trace->start_pc));
  trace->max_slot = recorder_->max_slot();
  trace->ir = recorder_->take_trace();
  trace->record_ms = now - record_start_ms_;
  recorder_.reset();
  return trace;
}

void TraceJit::finish_recording() {
  TraceStats& stats = telemetry_.stats();
  ++stats.recorded;
  const double now = now_ms();
  stats.record_ms += now - record_start_ms_;
  Trace& t = registry_.add(take_recording(now));
  if (JitTimeline* tl = telemetry_.timeline())
    tl->span(JitTimeline::Track::VM, "record", "record", now - t.record_ms, now, {{"trace", static_cast<int64_t>(t.id)}});
  if (telemetry_.logging()) {
    static constexpr const char* kKinds[] = {"loop", "function", "side"};  // Trace::Kind
    // Where the trace goes at its end: to itself, another trace, around its
    // own loop, back to its caller, or to the interpreter.
    const std::string link = t.link == static_cast<int32_t>(t.id)     ? "self"
                             : t.link >= 0                            ? "trace " + std::to_string(t.link)
                             : t.kind == Trace::Kind::Loop || t.peer ? "loop"
                             : t.kind == Trace::Kind::Function    ? "return"
                                                                  : "interpreter";
    telemetry_.event(JitEventKind::TraceStop, {{"trace", static_cast<int64_t>(t.id)},
                                               {"kind", std::string(kKinds[static_cast<int>(t.kind)])},
                                               {"at", telemetry_.where(t.line)},
                                               {"ir", static_cast<int64_t>(t.ir.size())},
                                               {"link", link}});
  }
  auto exit_code_full = [&] {
    discard(t, AbortReason::ExitCodeFull,
            fmt::format("trace {}, {} snapshots", t.id, t.ir.snapshots().size()));
  };
  bool go = TraceRegistry::fits_exit_code(t);
  if (!go) exit_code_full();
  else go = optimize(t);  // drops the trace itself when a pass fails
  // The per-snapshot tables are sized for the snapshots the optimizer leaves
  // (a pass may append snapshots: optimizer/pass.h), and also for a trace
  // dropped before or by the optimizer: invalidation and --stats walk every
  // trace's snapshots.
  registry_.size_exit_tables(t);
  if (!go) return;
  if (!TraceRegistry::fits_exit_code(t)) {  // the optimizer appended snapshots
    exit_code_full();
    return;
  }
  stats.ir_instructions += t.ir.size();
  if (auto failure = tiers_.compile(t)) discard(t, failure->reason, std::move(failure->error));
}

bool TraceJit::optimize(Trace& t) {
  TraceStats& stats = telemetry_.stats();
  t.recorded_size = static_cast<uint32_t>(t.ir.size());
  stats.ir_recorded += t.recorded_size;
  if (!params_.opt) return true;
  // The optimizer keeps snapshots and their numbers (it may append some),
  // so exits, links and side traces are keyed as recorded; finish_recording
  // sizes their tables after this.
  const double o0 = now_ms();
  TracePipeline::AfterPass keep;
  if (telemetry_.dumping()) {
    t.pass_ir.emplace_back("recorded", print_ir(t.ir));
    keep = [&t](const char* pass, const TraceIR& ir) { t.pass_ir.emplace_back(pass, print_ir(ir)); };
  }
  try {
    optimizer_.run(t.ir, keep);
  } catch (const std::exception& e) {
    // A pass that cannot handle a trace is a bug: the trace is dropped,
    // the program goes on in the interpreter, and --stats says why.
    discard(t, AbortReason::OptimizerFailed, e.what());
    return false;
  }
  const double spent = now_ms() - o0;
  stats.optimize_ms += spent;
  stats.compile_ms += spent;
  t.compile_ms += spent;
  return true;
}

void TraceJit::discard(Trace& t, AbortReason r, std::string why) {
  // The code stays interpreted.
  TraceRegistry::drop(t);
  if (telemetry_.logging())
    telemetry_.event(JitEventKind::TraceDropped, {{"trace", static_cast<int64_t>(t.id)},
                                                  {"reason", std::string(abort_reason_name(r))},
                                                  {"detail", why}});
  telemetry_.stats().count_abort(r, std::move(why));
  // A trace dropped after its recording (an optimizer pass or a tier could
  // not take it) is a failure of its start like an aborted recording: the
  // same back-off, or the loop would be recorded again every `hotloop`
  // iterations for as long as it runs.
  if (t.is_side) exit_policy_.failed(registry_[t.parent].exits, t.parent_snap);
  else root_failed(RootKey{t.proto, t.loop_pc}, t.line, telemetry_.where(t.line));
}

void TraceJit::install_finished() {
  if (!tiers_.has_finished()) return;
  for (CompileFailure& f : tiers_.install_finished()) discard(*f.trace, f.reason, std::move(f.error));
}

uint64_t TraceJit::exits_taken() const {
  uint64_t n = 0;
  for (const auto& t : registry_.all()) n += t->exits.total();
  return n;
}

inline uint32_t TraceJit::run_native(uint32_t id, Value* base, Value* globals, FrameRegion& frames, JitContext& ctx) {
  ctx.base = base;
  ctx.globals = globals;
  ctx.frames = frames;
  Trace& t = registry_[id];
  ++t.entries;
  // Linked exits go from trace to trace natively (tail calls); what comes
  // back is the exit that has no link, with the registers already written.
  const uint32_t code = t.fn(base, globals, registry_.exit_buffer(), &ctx);
  frames.top = ctx.frames.top;  // pushed and popped by compiled code
  return code;
}

inline uint32_t TraceJit::enter(uint32_t id, Value* base, Value* globals, FrameRegion& frames) {
  if (const void* self = this_thread_id(); self != strings_thread_) {
    strings_ = one_byte_strings();
    strings_thread_ = self;
    entry_ctx_.one_byte_strings = strings_;
  }
  if (entry_ctx_busy_) [[unlikely]]
    return enter_nested(id, base, globals, frames);
  // Free again however the run ends (a helper's exception passes through).
  struct Busy {
    bool& flag;
    explicit Busy(bool& f) : flag(f) { flag = true; }
    ~Busy() { flag = false; }
  } busy(entry_ctx_busy_);
  return run_native(id, base, globals, frames, entry_ctx_);
}

uint32_t TraceJit::enter_nested(uint32_t id, Value* base, Value* globals, FrameRegion& frames) {
  JitContext ctx = entry_ctx_;
  return run_native(id, base, globals, frames, ctx);
}

// The entry path is what a host's call of a small compiled function pays
// on top of the function itself (experiments/results/embedding-latest.md): the rare cases (an
// observer listening, a tier-up, an exit) are out of line, so that the
// common ones, a return and a linked loop's exit, stay short.
inline TraceJit::Ran TraceJit::run(uint32_t id, Value* base, Value* globals, FrameRegion& frames) {
  if (tiers_.has_finished()) install_finished();  // the check inline: every entry pays it
  CallFrame* const top = frames.top;
  const uint32_t code = nvtx_attached_ || telemetry_.timing() ? enter_observed(id, base, globals, frames)
                                                               : enter(id, base, globals, frames);
  auto [t, snap_no] = registry_.exit_of(code);
  // The function's own return (Trace::returns): the run's end, no exit.
  const bool returned = frames.top == top && t.returns_at(snap_no);
  if (returned) ++t.returns_taken;
  return Ran{t, snap_no, returned};
}

void TraceJit::run_trace(uint32_t id, Value* base, Value* globals, FrameRegion& frames, TraceExit& exit) {
  const Ran r = run(id, base, globals, frames);
  if (r.returned) {
    // The interpreter's dispatch loop runs the RET.
    if (exit.pcs.size() == 1) exit.pcs[0] = r.t.returns[r.snap];
    else exit.pcs.assign(1, r.t.returns[r.snap]);
    exit.frames.clear();
    exit.start_recording = false;
    return;
  }
  take_exit(r.t, r.snap, exit, base);
}

static_assert(Trace::kNotReturn == TraceExit::kNotReturned);

uint32_t TraceJit::call_function_trace(uint32_t id, Value* base, Value* globals, FrameRegion& frames,
                                       TraceExit& exit) {
  const Ran r = run(id, base, globals, frames);
  if (r.returned) return r.t.returns[r.snap];  // the host's call ends here
  take_exit(r.t, r.snap, exit, base);
  return TraceExit::kNotReturned;
}

uint32_t TraceJit::enter_observed(uint32_t id, Value* base, Value* globals, FrameRegion& frames) {
  const bool timed = telemetry_.timing();
  const double entered = timed ? now_ms() : 0;
  uint32_t code;
  {
    // Nsight's range for the entry: "trace 3 (file.tsb:12)", named only when a tool listens.
    const nvtx::Range range([&] { return fmt::format("trace {} ({})", id, telemetry_.where(registry_[id].line)); });
    code = enter(id, base, globals, frames);
  }
  if (timed) {
    registry_[id].native_ms += now_ms() - entered;
    if (JitTimeline* tl = telemetry_.timeline()) timeline_trace_run(*tl, id, code, entered);
  }
  return code;
}

void TraceJit::take_exit(Trace& t, uint32_t snap_no, TraceExit& exit, const Value* base) {
  exit.frames.clear();
  exit.start_recording = false;
  if (snap_no == kTierUpExit) {
    // A T1 trace ran `tier2` iterations: the interpreter resumes where
    // snapshot 0 does (the loop-carried values are written), and the trace
    // is entered again right there, in T2 once it is ready.
    // (A side trace that starts inside inlined frames resumes inside them.)
    tiers_.tier_up(t);
    const ExitPlan& entry = (*t.exit_plans)[0];
    exit.pcs = entry.resume_pcs;
    for (const ExitFrame& f : entry.frames) exit.frames.push_back(TraceExit::Frame{f.proto, f.base});
    return;
  }
  const ExitPlan& plan = (*t.exit_plans)[snap_no];
  exit.pcs = plan.resume_pcs;
  for (const ExitFrame& f : plan.frames) exit.frames.push_back(TraceExit::Frame{f.proto, f.base});
  exit_policy_.count(t.exits, plan);
  maybe_start_side_trace(t, snap_no, exit, base);
}

// The timeline: the time in compiled code from entering trace `id` to the
// exit it left by (maybe from a trace it linked to), and the exit (deopt).
void TraceJit::timeline_trace_run(JitTimeline& tl, uint32_t id, uint32_t code, double entered) {
  const double left = now_ms();
  auto [t, snap_no] = registry_.exit_of(code);
  const bool tier_up = snap_no == kTierUpExit;
  const int64_t line = tier_up ? 0 : t.exit_line(snap_no);
  // Small args: an entry per run, so no allocation (JitTimeline::SmallArgs).
  JitTimeline::SmallArgs run;
  run.add("exit_trace", static_cast<int64_t>(t.id));
  if (tier_up) run.add("exit", "tier-up");
  else run.add("exit", static_cast<int64_t>(snap_no));
  char name[32];
  const auto n = fmt::format_to_n(name, sizeof name, "trace {}", id);
  tl.span(JitTimeline::Track::VM, std::string_view(name, n.size), "trace", entered, left, run);
  tl.instant(JitTimeline::Track::VM, tier_up ? "tier-up exit" : "exit", "deopt", left,
             JitTimeline::SmallArgs()
                 .add("trace", static_cast<int64_t>(t.id))
                 .add("exit", static_cast<int64_t>(tier_up ? -1 : snap_no))
                 .add("line", line));
}

bool TraceJit::entry_types_hold(const Trace& t, const Value* R) {
  for (const IRIns& in : t.ir.instructions()) {
    if (in.op == IROp::LOOP) break;
    if (in.op == IROp::SLOAD && in.op2 == 0 && type_of_value(R[in.op1]) != in.type) return false;
  }
  return true;
}

bool TraceJit::wants_peer(const Trace& t, uint32_t snap, const Value* base) const {
  if (!t.loop_pc || (t.kind != Trace::Kind::Loop && !t.peer)) return false;
  // An exit at the body's start, nothing of the iteration done yet.
  const Snapshot& s = t.ir.snapshots()[snap];
  if (s.base_proto != nullptr || !s.frames.empty() || s.pc != t.start_pc) return false;
  // The entry exit is shared by the entry loads' type guards and by checks
  // hoisted to the entry (loop_predicate.h): only a type that changed
  // calls for another loop trace.
  if (snap == 0) return !entry_types_hold(t, base);
  // The type guard of an element loaded first thing in the body (a row
  // whose elements turned float): the element has another type now. Only
  // from a loop's first trace: a peer's own such exits get side traces,
  // which link back into it.
  if (t.peer || !entry_types_hold(t, base)) return false;
  bool loads = false;
  for (const IRIns& in : t.ir.instructions()) {
    if (in.snap != snap) continue;
    if (in.op != IROp::LLOAD) return false;
    loads = true;
  }
  return loads;
}

uint32_t TraceJit::home_loop_trace(uint32_t id) {
  const Trace* t = &registry_[id];
  while (t->is_side && !t->peer) t = &registry_[t->parent];
  return t->id;
}

TraceRecorder::LoopTraceChoice TraceJit::loop_trace_choice(std::optional<uint32_t> home) {
  return [this, home](const FunctionProto& fn, uint32_t pc, const Value* R) {
    // A side trace goes back into the loop trace whose tree it belongs to
    // when that one takes the types (a peer's side traces into the peer).
    if (home) {
      const Trace& h = registry_[*home];
      if (h.proto == &fn && h.loop_pc == pc && !h.dead && h.native && entry_types_hold(h, R)) return *home;
    }
    const uint32_t first = fn.trace_at(pc);
    if (entry_types_hold(registry_[first], R)) return first;
    for (const auto& t : registry_.all())
      if (t->peer && t->proto == &fn && t->loop_pc == pc && !t->dead && !t->pending && t->native &&
          entry_types_hold(*t, R))
        return t->id;
    return first;
  };
}

namespace {

// What a side trace recorded from an exit with `plan` takes in registers:
// all of the plan's passed values (on that path the exit writes none of
// them), or none when a register does not hold the type the plan says.
std::vector<TraceRecorder::PassedSlot> passed_slots(const ExitPlan& plan, const Value* base) {
  std::vector<TraceRecorder::PassedSlot> out;
  for (const PassedValue& p : plan.passed) {
    const ExitWrite& w = plan.writes[p.write];
    const IRType t = plan.values[w.value].type;
    if (type_of_value(base[w.slot]) != t) return {};
    out.push_back(TraceRecorder::PassedSlot{w.slot, t, p.reg});
  }
  return out;
}

}  // namespace

void TraceJit::maybe_start_side_trace(Trace& t, uint32_t snap_no, TraceExit& exit, const Value* base) {
  // deopt/exit_policy.h decides; the runtime adds what only it knows.
  const ExitPlan& plan = (*t.exit_plans)[snap_no];
  if (recorder_ || !exit_policy_.wants_side_trace(t.exits, plan, registry_[t.root].sides)) return;
  const Snapshot& snap = t.ir.snapshots()[snap_no];
  if (registry_.pending_side(t.id, snap_no)) return;
  if (wants_peer(t, snap_no, base)) {
    // TraceMonkey's type-unstable loops: a whole loop trace for the new
    // types, entered from this exit, instead of a side trace that runs one
    // iteration and links back to the trace that just failed.
    if (registry_.size() >= static_cast<size_t>(params_.maxtrace)) return;
    recorder_ = std::make_unique<TraceRecorder>(t.proto, *t.loop_pc, limits());
    recorder_->set_peer();
    recorder_->set_loop_trace_choice(loop_trace_choice());
    side_parent_ = t.id;
    side_snap_ = snap_no;
    record_start_ms_ = now_ms();
    exit.start_recording = true;
    if (telemetry_.logging())
      log_record_start("peer", t.line,
                       {{"parent", static_cast<int64_t>(t.id)},
                        {"exit", static_cast<int64_t>(snap_no)},
                        {"taken", static_cast<int64_t>(t.exits[snap_no])}});
    return;
  }
  auto proven = exit_slot_types(t.ir, static_cast<uint16_t>(snap_no));
  if (Trace* side = registry_.side_trace_to_share(t, snap_no, proven)) {
    // Another exit resumes alike and has its side trace: link to that one.
    TraceRegistry::share(t, snap_no, *side);
    ++telemetry_.stats().shared_exits;
    if (telemetry_.logging())
      telemetry_.event(JitEventKind::ExitShared, {{"trace", static_cast<int64_t>(t.id)},
                                                  {"exit", static_cast<int64_t>(snap_no)},
                                                  {"side", static_cast<int64_t>(side->id)}});
    return;
  }
  if (registry_.size() >= static_cast<size_t>(params_.maxtrace)) return;
  recorder_ = std::make_unique<TraceRecorder>(snap.base_proto ? snap.base_proto : t.proto, snap.pc, limits(),
                                              TraceRecorder::SideTrace{}, snap.frames);
  recorder_->set_parent_types(std::move(proven));
  recorder_->set_loop_trace_choice(loop_trace_choice(home_loop_trace(t.id)));
  recorder_->set_parent_constants(t.ir, exit_slot_constants(t.ir, static_cast<uint16_t>(snap_no)));
  if (params_.passregs && t.exit_plans != nullptr) recorder_->set_passed_slots(passed_slots((*t.exit_plans)[snap_no], base));
  side_parent_ = t.id;
  side_snap_ = snap_no;
  record_start_ms_ = now_ms();
  exit.start_recording = true;
  if (telemetry_.logging())
    log_record_start("side", source_line(*(snap.base_proto ? snap.base_proto : t.proto), snap.pc),
                     {{"parent", static_cast<int64_t>(t.id)},
                      {"exit", static_cast<int64_t>(snap_no)},
                      {"taken", static_cast<int64_t>(t.exits[snap_no])}});
}

}  // namespace tessera::jit
