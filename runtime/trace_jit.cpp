#include "runtime/trace_jit.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <ostream>

#include <unistd.h>  // getpid, for perfmap

#include "codegen/host/asmjit/asmjit_backend.h"
#include "codegen/host/llvm/llvm_backend.h"
#include "optimizer/pipeline.h"
#include "runtime/compile_worker.h"
#include "tracer/exit_slot_types.h"
#include "deopt/exit_plan.h"
#include "vm/interp/vm.h"

namespace tessera::jit {

namespace {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

Op entering_op(Op loop_op) {
  switch (loop_op) {
    case Op::FORLOOP: return Op::JFORLOOP;
    case Op::ITERLOOP: return Op::JITERLOOP;
    default: return Op::JLOOP;
  }
}

// The inverse of entering_op: what an invalidated loop's back-edge becomes.
Op back_edge_op(Op entering) {
  switch (entering) {
    case Op::JFORLOOP: return Op::FORLOOP;
    case Op::JITERLOOP: return Op::ITERLOOP;
    case Op::JLOOP: return Op::LOOP;
    default: return entering;
  }
}

int line_of(const FunctionProto& p, uint32_t pc) {
  return pc < p.lines.size() ? p.lines[pc] : p.line;
}

}  // namespace

TraceJit::TraceJit(VM& vm, const JitParams& params, std::string script_name, std::string dump_dir)
    : vm_(vm),
      params_(params),
      script_name_(std::move(script_name)),
      dump_dir_(std::move(dump_dir)),
      optimizer_(TracePipeline::Options(params)),
      exit_policy_(ExitPolicy::Params{.hotexit = static_cast<uint32_t>(params.hotexit),
                                      .maxside = static_cast<uint32_t>(params.maxside),
                                      .maxsidetries = static_cast<uint32_t>(params.maxsidetries)}),
      created_ms_(now_ms()) {}

// The worker goes first: it may be compiling a trace's IR.
TraceJit::~TraceJit() { worker_.reset(); }

RecorderLimits TraceJit::limits() const {
  RecorderLimits limits;
  limits.maxrecord = static_cast<uint32_t>(params_.maxrecord);
  limits.maxinline = static_cast<uint32_t>(params_.maxinline);
  return limits;
}

bool TraceJit::blacklisted(const FunctionProto* fn, uint32_t pc) const {
  for (const LoopPenalty& p : penalties_)
    if (p.proto == fn && p.pc == pc && p.aborts >= static_cast<uint32_t>(params_.blacklist)) return true;
  return false;
}

bool TraceJit::start_recording(FunctionProto& fn, uint32_t loop_pc) {
  ++stats_.hot_loops;
  if (recorder_) return false;  // already recording (a nested loop got hot)
  install_finished();  // may patch this very back-edge
  if (pending_trace(&fn, loop_pc, Trace::Kind::Loop)) return false;
  if (traces_.size() >= static_cast<size_t>(params_.maxtrace)) return false;
  Op op = fn.code[loop_pc].op;
  if (op != Op::FORLOOP && op != Op::ITERLOOP && op != Op::LOOP) return false;
  if (blacklisted(&fn, loop_pc)) return false;
  recorder_ = std::make_unique<TraceRecorder>(&fn, loop_pc, limits());
  record_start_ms_ = now_ms();
  return true;
}

void TraceJit::watch_globals(uint8_t* watch, const Value* globals, size_t n) {
  global_watch_ = watch;
  globals_ = globals;
  num_globals_ = n;
}

void TraceJit::invalidate(Trace& t) {
  t.dead = true;
  ++stats_.invalidated;
  if (t.kind == Trace::Kind::Loop) {
    // The back-edge counts again; the loop may be recorded anew.
    Instr& edge = t.proto->code[t.loop_pc];
    edge.op = back_edge_op(edge.op);
    std::erase_if(t.proto->loop_traces, [&](const auto& e) { return e.second == t.id; });
  } else if (t.kind == Trace::Kind::Function && t.proto->entry_trace == static_cast<int32_t>(t.id)) {
    t.proto->entry_trace = -1;
  }
  // No exit goes to it any more (its side traces are reachable only from it).
  for (auto& other : traces_)
    for (size_t k = 0; k < other->ir.snapshots().size(); ++k)
      if (other->links[k] == t.native) other->links[k] = nullptr;
}

void TraceJit::invalidate_global(uint32_t index) {
  for (auto& t : traces_) {
    if (t->dead || t->pending) continue;  // a pending trace is checked when it is installed
    const auto& assumed = t->ir.assumed_globals();
    if (std::any_of(assumed.begin(), assumed.end(), [&](const auto& a) { return a.index == index; }))
      invalidate(*t);
  }
  if (index < num_globals_) global_watch_[index] = 0;  // no live trace assumes it now
}

bool TraceJit::start_function_recording(FunctionProto& fn) {
  ++stats_.hot_functions;
  if (recorder_) return false;
  install_finished();
  if (fn.entry_trace >= 0 || pending_trace(&fn, 0, Trace::Kind::Function)) return false;
  if (traces_.size() >= static_cast<size_t>(params_.maxtrace)) return false;
  // Function traces are blacklisted under the pseudo-pc UINT32_MAX (their
  // recorder's loop_pc()).
  if (blacklisted(&fn, UINT32_MAX)) return false;
  recorder_ = std::make_unique<TraceRecorder>(&fn, limits(), TraceRecorder::FunctionEntry{});
  record_start_ms_ = now_ms();
  return true;
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

void TraceJit::recording_failed() {
  if (recorder_) abort_recording(AbortReason::ErrorRaised, "");
}

void TraceJit::abort_recording(AbortReason r, const std::string& detail) {
  ++stats_.aborts[static_cast<int>(r)];
  stats_.last_abort[static_cast<int>(r)] = detail;
  stats_.record_ms += now_ms() - record_start_ms_;
  // An inner loop whose trace is still being compiled: not a failure of
  // this loop or exit, just too early (no penalty; try again later).
  const bool too_early = r == AbortReason::InnerLoop &&
                         std::any_of(traces_.begin(), traces_.end(), [](const auto& t) { return t->pending; });
  if (recorder_->is_side()) {
    Trace& parent = *traces_[side_parent_];
    if (too_early) exit_policy_.too_early(parent.exits, side_snap_);  // another `hotexit` exits first
    else exit_policy_.failed(parent.exits, side_snap_);
    recorder_.reset();
    return;
  }
  if (too_early) {
    recorder_.reset();
    return;
  }
  FunctionProto* p = recorder_->root();
  const uint32_t pc = recorder_->loop_pc();  // UINT32_MAX: a function trace
  recorder_.reset();
  uint32_t aborts = 1;
  auto it = std::find_if(penalties_.begin(), penalties_.end(),
                         [&](const LoopPenalty& lp) { return lp.proto == p && lp.pc == pc; });
  if (it != penalties_.end()) aborts = ++it->aborts;
  else penalties_.push_back(LoopPenalty{p, pc, 1});
  if (aborts == static_cast<uint32_t>(params_.blacklist)) ++stats_.blacklisted;
  // Back-off: the next try waits twice as long as the last (the counter is
  // past its reset to the threshold by now, so this value sticks).
  const uint64_t wait = std::min<uint64_t>(uint64_t{65535}, uint64_t(pc == UINT32_MAX ? params_.hotcall : params_.hotloop)
                                                                   << std::min<uint32_t>(aborts, 16));
  if (pc == UINT32_MAX) p->entry_hotcount = static_cast<uint32_t>(wait);
  else if (pc < p->hotcounts.size()) p->hotcounts[pc] = static_cast<uint16_t>(wait);
}

void TraceJit::finish_recording() {
  ++stats_.recorded;
  double t0 = now_ms();
  stats_.record_ms += t0 - record_start_ms_;
  auto trace = std::make_unique<Trace>();
  trace->id = static_cast<uint32_t>(traces_.size());
  if (recorder_->is_side()) {
    trace->kind = Trace::Kind::Side;
    trace->is_side = true;
    trace->parent = side_parent_;
    trace->parent_snap = side_snap_;
    trace->root = traces_[side_parent_]->root;
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
  trace->loop_pc = recorder_->loop_pc();
  trace->start_pc = recorder_->start_pc();
  trace->line = trace->kind == Trace::Kind::Function ? trace->proto->line
                : line_of(*trace->proto, trace->is_side ? trace->start_pc : trace->loop_pc);
  trace->max_slot = recorder_->max_slot();
  trace->ir = recorder_->take_trace();
  trace->record_ms = t0 - record_start_ms_;
  recorder_.reset();
  stack_need_ = std::max(stack_need_, trace->max_slot + 1);
  Trace& t = *trace;
  traces_.push_back(std::move(trace));
  // The per-snapshot tables are sized for the snapshots the optimizer leaves
  // (a pass may append snapshots: optimizer/pass.h), and also for a trace
  // dropped before or by the optimizer: invalidate() and --stats walk every
  // trace's snapshots.
  auto size_exit_tables = [&] {
    for (const Snapshot& s : t.ir.snapshots()) {
      if (s.base_proto) stack_need_ = std::max<uint32_t>(stack_need_, static_cast<uint32_t>(s.base_proto->nregs) + 1);
      for (const SnapshotFrame& f : s.frames)
        stack_need_ = std::max<uint32_t>(stack_need_, f.base + static_cast<uint32_t>(f.proto->nregs) + 1);
    }
    // FPUSH checks room against FrameRegion::push_limit only, which must
    // therefore cover every callee's registers.
    for (IRRef r = 0; r < t.ir.size(); ++r)
      if (t.ir[r].op == IROp::FPUSH && t.ir[t.ir[r].op1].op == IROp::KOBJ) {
        const auto* callee = static_cast<const FunctionProto*>(t.ir.const_ptr(t.ir[r].op1));
        stack_need_ = std::max<uint32_t>(stack_need_, static_cast<uint32_t>(callee->nregs) + 1);
      }
    t.exits.reset(t.ir.snapshots().size());
    t.links = std::make_unique<NativeTrace[]>(t.ir.snapshots().size());  // all null
    t.exit_lines.clear();
    for (const Snapshot& s : t.ir.snapshots()) {
      const FunctionProto& base = s.base_proto ? *s.base_proto : *t.proto;
      t.exit_lines.push_back(line_of(s.frames.empty() ? base : *s.frames.back().proto, s.pc));
    }
  };
  auto fits_exit_code = [&] { return t.ir.snapshots().size() < kTierUpExit && t.id <= 0xFFFF; };
  bool go = fits_exit_code();
  if (!go) discard(t, "too many snapshots or traces for the exit code");
  else go = optimize(t);  // drops the trace itself when a pass fails
  size_exit_tables();
  if (!go) return;
  if (!fits_exit_code()) {  // the optimizer appended snapshots
    discard(t, "too many snapshots or traces for the exit code");
    return;
  }
  stats_.ir_instructions += t.ir.size();
  ExitLinking linking;
  linking.code_base = t.id << 16;
  linking.links = t.links.get();
  std::string name = code_name(t);
  if (params_.tier != 2) {
    // T1: asmjit takes microseconds, so it always compiles right here.
    try {
      if (!baseline_) {
        baseline_ = std::make_unique<AsmjitBackend>();
        baseline_->set_keep_text(!dump_dir_.empty());
      }
      uint32_t* counter = nullptr;
      if (params_.tier == 0) {
        t.tier_up_counter = static_cast<uint32_t>(params_.tier2);
        counter = &t.tier_up_counter;
      }
      CompiledTrace code = baseline_->compile(t.ir, name, linking, t.proto, global_watch_, counter);
      install(t, code, 1);
    } catch (const std::exception& e) {
      discard(t, e.what());
    }
    return;
  }
  if (params_.async) {
    // LLVM works on its own thread; the interpreter goes on, and the trace
    // is installed at the next safe point after it is done.
    if (!worker_) worker_ = std::make_unique<CompileWorker>();
    t.pending = true;
    worker_->submit(
        CompileWorker::Job{t.id, &t.ir, std::move(name), linking, t.proto, global_watch_, !dump_dir_.empty()});
    return;
  }
  try {
    // The LLVM JIT is created with the first trace: scripts that never get
    // hot do not pay for it.
    if (!backend_) {
      backend_ = std::make_unique<LlvmBackend>(2);
      backend_->set_keep_text(!dump_dir_.empty());
    }
    CompiledTrace code = backend_->compile(t.ir, name, linking, t.proto, global_watch_);
    install(t, code, 2);
  } catch (const std::exception& e) {
    discard(t, e.what());
  }
}

std::string TraceJit::code_name(const Trace& t) const {
  return fmt::format("trace{}_{}_{}", t.id, t.function == "<main>" ? "main" : t.function, t.line);
}

bool TraceJit::optimize(Trace& t) {
  t.recorded_size = static_cast<uint32_t>(t.ir.size());
  stats_.ir_recorded += t.recorded_size;
  if (!params_.opt) return true;
  // The optimizer keeps snapshots and their numbers (it may append some),
  // so exits, links and side traces are keyed as recorded; finish_recording
  // sizes their tables after this.
  const double o0 = now_ms();
  TracePipeline::AfterPass keep;
  if (!dump_dir_.empty()) {
    t.pass_ir.emplace_back("recorded", print_ir(t.ir));
    keep = [&t](const char* pass, const TraceIR& ir) { t.pass_ir.emplace_back(pass, print_ir(ir)); };
  }
  try {
    optimizer_.run(t.ir, keep);
  } catch (const std::exception& e) {
    // A pass that cannot handle a trace is a bug: the trace is dropped,
    // the program goes on in the interpreter, and --stats says why.
    discard(t, std::string("optimizer: ") + e.what());
    return false;
  }
  const double spent = now_ms() - o0;
  stats_.optimize_ms += spent;
  stats_.compile_ms += spent;
  t.compile_ms += spent;
  return true;
}

void TraceJit::discard(Trace& t, const std::string& why) {
  // A trace the backend cannot compile is dropped; the code stays interpreted.
  t.dead = true;
  t.pending = false;
  ++stats_.aborts[static_cast<int>(AbortReason::NYIBytecode)];
  stats_.last_abort[static_cast<int>(AbortReason::NYIBytecode)] = why;
  if (t.is_side) {
    Trace& parent = *traces_[t.parent];
    exit_policy_.failed(parent.exits, t.parent_snap);
  }
}

void TraceJit::note_compiled(Trace& t, const CompiledTrace& code, int tier) {
  const size_t k = static_cast<size_t>(tier - 1);
  t.code_text[k] = code.text;
  if (!code.object.empty()) t.code_object = code.object;
  t.code_size[k] = code.code_size;
  t.tier_compile_ms[k] = code.compile_ms;
  t.compile_ms += code.compile_ms;  // after the optimizer's share
  stats_.compile_ms += code.compile_ms;
  ++stats_.tier_compiled[k];
  stats_.tier_compile_ms[k] += code.compile_ms;
  stats_.tier_code_bytes[k] += code.code_size;
  stats_.tier_compile_samples[k].push_back(code.compile_ms);
  if (profile_) profile_->add_code(code.code_begin, code.code_size, tier);
  if (params_.perfmap && code.code_size > 0) {
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

void TraceJit::enable_tier_profile() {
  if (profile_) return;
  profile_ = std::make_unique<TierProfile>();
  if (!profile_->start()) profile_.reset();  // another VM profiles, or no timer: no tier times
}

void TraceJit::use_exit_plans(Trace& t, const CompiledTrace& code) {
  t.exit_plans = code.exit_plans;
  // exit_vals holds the values of the exit that returns to the runtime.
  size_t need = 1;
  for (const ExitPlan& p : *code.exit_plans) need = std::max(need, p.values.size());
  if (exit_buffer_.size() < need) exit_buffer_.resize(need);
}

void TraceJit::install(Trace& t, CompiledTrace& code, int tier) {
  t.pending = false;
  t.fn = code.fn;
  t.native = code.native;
  use_exit_plans(t, code);
  t.tier = static_cast<uint8_t>(tier);
  note_compiled(t, code, tier);
  // Compiled in the background, the trace may be out of date by now: a
  // global it assumed was stored into, or the trace it hangs off or links to
  // was invalidated. (Its watch bytes were not set while it compiled.)
  bool stale = t.dead || (t.is_side && traces_[t.parent]->dead) ||
               (t.link >= 0 && t.link != static_cast<int32_t>(t.id) && traces_[static_cast<size_t>(t.link)]->dead);
  for (const auto& a : t.ir.assumed_globals()) {
    const Value* g = a.index < num_globals_ && globals_ ? &globals_[a.index] : nullptr;
    const void* now = g == nullptr ? nullptr
                      : g->is_func() ? static_cast<const void*>(g->as_func())
                      : g->is_builtin() ? static_cast<const void*>(g->as_builtin())
                                        : nullptr;
    stale = stale || now != a.value;
  }
  if (stale) {
    if (!t.dead) ++stats_.invalidated;
    t.dead = true;
    return;
  }
  ++stats_.compiled;
  stats_.last_trace_ms = now_ms() - created_ms_;
  if (stats_.first_trace_ms < 0) stats_.first_trace_ms = stats_.last_trace_ms;
  if (t.link == static_cast<int32_t>(t.id))
    t.links[t.link_snap] = t.native;
  else if (t.link >= 0)
    t.links[t.link_snap] = traces_[static_cast<size_t>(t.link)]->native;
  for (const auto& a : t.ir.assumed_globals())
    if (a.index < num_globals_) global_watch_[a.index] = 1;
  if (t.is_side) {
    // Hang it off its parent's exit: the next time that exit is taken the
    // runtime goes straight into it.
    traces_[t.parent]->links[t.parent_snap] = t.native;
    ++traces_[t.root]->sides;
    ++stats_.side_traces;
  } else if (t.kind == Trace::Kind::Function) {
    // Calls of the function enter the trace from now on.
    t.proto->entry_trace = static_cast<int32_t>(t.id);
  } else {
    // Patch the loop's back-edge so that the interpreter enters the trace.
    FunctionProto* p = t.proto;
    p->code[t.loop_pc].op = entering_op(p->code[t.loop_pc].op);
    p->loop_traces.emplace_back(t.loop_pc, t.id);
  }
  if (!dump_dir_.empty()) dump(t);
}

void TraceJit::install_finished() {
  if (!worker_) return;
  for (CompileWorker::Result& r : worker_->take_finished()) {
    Trace& t = *traces_[r.trace_id];
    if (t.upgrade == Trace::Upgrade::Queued) {
      // A T1 trace's T2 code. If LLVM failed, the trace stays in T1 and
      // polls no more.
      if (!r.error.empty()) {
        t.upgrade = Trace::Upgrade::Failed;
        t.tier_up_counter = UINT32_MAX;
        stats_.last_abort[static_cast<int>(AbortReason::NYIBytecode)] = "tier-up: " + r.error;
      } else {
        upgrade(t, r.code);
      }
      continue;
    }
    if (!r.error.empty()) discard(t, r.error);
    else install(t, r.code, 2);
  }
}

void TraceJit::request_upgrade(Trace& t) {
  ++stats_.tier_up_exits;
  // Poll again while LLVM works (the T1 code keeps running until the T2
  // code is there), each time after twice as many iterations: every poll is
  // a trip through the interpreter, and a hot loop would otherwise take one
  // per `tier2` iterations for as long as the compile queue is long.
  t.tier_up_interval = t.tier_up_interval == 0 ? static_cast<uint32_t>(params_.tier2)
                                               : std::min<uint32_t>(t.tier_up_interval, 1u << 30) * 2;
  t.tier_up_counter = t.tier_up_interval;
  if (t.upgrade != Trace::Upgrade::None || t.dead) return;
  ExitLinking linking;
  linking.code_base = t.id << 16;
  linking.links = t.links.get();  // shared: both tiers' exits read the same links
  if (params_.async) {
    if (!worker_) worker_ = std::make_unique<CompileWorker>();
    t.upgrade = Trace::Upgrade::Queued;
    worker_->submit(
        CompileWorker::Job{t.id, &t.ir, code_name(t), linking, t.proto, global_watch_, !dump_dir_.empty()});
    return;
  }
  // async=0: LLVM compiles now, and the program goes on in T2 (reproducible).
  try {
    if (!backend_) {
      backend_ = std::make_unique<LlvmBackend>(2);
      backend_->set_keep_text(!dump_dir_.empty());
    }
    CompiledTrace code = backend_->compile(t.ir, code_name(t), linking, t.proto, global_watch_);
    upgrade(t, code);
  } catch (const std::exception& e) {
    t.upgrade = Trace::Upgrade::Failed;
    t.tier_up_counter = UINT32_MAX;
    stats_.last_abort[static_cast<int>(AbortReason::NYIBytecode)] = std::string("tier-up: ") + e.what();
  }
}

void TraceJit::upgrade(Trace& t, CompiledTrace& code) {
  note_compiled(t, code, 2);
  t.upgrade = Trace::Upgrade::Done;
  if (t.dead) return;  // invalidated while LLVM worked
  // Safe point: no trace runs. Everything that entered or linked to the T1
  // code now goes to the T2 code; the T1 code stays mapped (unused).
  const NativeTrace old = t.native;
  t.fn = code.fn;
  t.native = code.native;
  use_exit_plans(t, code);
  t.tier = 2;
  t.tier_up_counter = UINT32_MAX;
  for (auto& other : traces_)
    for (size_t k = 0; k < other->ir.snapshots().size(); ++k)
      if (other->links[k] == old) other->links[k] = t.native;
  ++stats_.upgrades;
  if (!dump_dir_.empty()) dump(t);
}

void TraceJit::stop_compiling() {
  worker_.reset();
  global_watch_ = nullptr;  // the interpreter's, going away with it
  globals_ = nullptr;
  num_globals_ = 0;
}

bool TraceJit::pending_trace(const FunctionProto* proto, uint32_t loop_pc, Trace::Kind kind) const {
  for (const auto& t : traces_)
    if (t->pending && t->kind == kind && t->proto == proto && (kind != Trace::Kind::Loop || t->loop_pc == loop_pc))
      return true;
  return false;
}

bool TraceJit::pending_side_trace(uint32_t parent, uint32_t snap) const {
  for (const auto& t : traces_)
    if (t->pending && t->is_side && t->parent == parent && t->parent_snap == snap) return true;
  return false;
}

uint32_t TraceJit::trace_stack_need(uint32_t /*id*/) const { return stack_need_; }

void TraceJit::run_trace(uint32_t id, Value* base, Value* globals, FrameRegion& frames, TraceExit& exit) {
  install_finished();
  JitContext ctx;
  ctx.vm = &vm_;
  ctx.base = base;
  ctx.globals = globals;
  ctx.frames = frames;
  ctx.jit = this;
  ctx.global_stored = [](void* jit, uint32_t index) { static_cast<TraceJit*>(jit)->invalidate_global(index); };
  ++traces_[id]->entries;
  // Linked exits go from trace to trace natively (tail calls); what comes
  // back is the exit that has no link, with the registers already written.
  const uint32_t code = traces_[id]->fn(base, globals, exit_buffer_.data(), &ctx);
  frames.top = ctx.frames.top;  // pushed and popped by compiled code
  Trace& t = *traces_[code >> 16];
  const uint32_t snap_no = code & 0xFFFF;
  if (snap_no == kTierUpExit) {
    // A T1 trace ran `tier2` iterations: the interpreter resumes where
    // snapshot 0 does (the loop-carried values are written), and the trace
    // is entered again right there, in T2 once it is ready.
    request_upgrade(t);
    exit.pcs = (*t.exit_plans)[0].resume_pcs;
    exit.frames.clear();
    exit.start_recording = false;
    return;
  }
  const ExitPlan& plan = (*t.exit_plans)[snap_no];
  exit_policy_.count(t.exits, plan);
  exit.pcs = plan.resume_pcs;
  exit.frames.clear();
  for (const ExitFrame& f : plan.frames) exit.frames.push_back(TraceExit::Frame{f.proto, f.base});
  exit.start_recording = false;
  maybe_start_side_trace(t, snap_no, exit);
}

void TraceJit::maybe_start_side_trace(Trace& t, uint32_t snap_no, TraceExit& exit) {
  // deopt/exit_policy.h decides; the runtime adds what only it knows.
  const ExitPlan& plan = (*t.exit_plans)[snap_no];
  if (recorder_ || !exit_policy_.wants_side_trace(t.exits, plan, traces_[t.root]->sides)) return;
  const Snapshot& snap = t.ir.snapshots()[snap_no];
  if (traces_.size() >= static_cast<size_t>(params_.maxtrace)) return;
  if (pending_side_trace(t.id, snap_no)) return;
  recorder_ = std::make_unique<TraceRecorder>(snap.base_proto ? snap.base_proto : t.proto, snap.pc, limits(),
                                              TraceRecorder::SideTrace{});
  recorder_->set_parent_types(exit_slot_types(t.ir, static_cast<uint16_t>(snap_no)));
  side_parent_ = t.id;
  side_snap_ = snap_no;
  record_start_ms_ = now_ms();
  exit.start_recording = true;
}

void TraceJit::print_stats(std::ostream& os) const {
  uint64_t aborted = 0;
  for (uint64_t a : stats_.aborts) aborted += a;
  os << fmt::format(
      "  traces: {} recorded, {} compiled ({} side traces), {} aborted, {} loops blacklisted, {} invalidated\n",
      stats_.recorded, stats_.compiled, stats_.side_traces, aborted, stats_.blacklisted, stats_.invalidated);
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
    for (const auto& t : traces_)
      for (const IRIns& in : t->ir.instructions()) {
        tensors += in.op == IROp::VNEWTENSOR;
        lists += in.op == IROp::VNEWLIST;
      }
    os << fmt::format("  allocation sinking: not allocated by the compiled traces: tensors {}, lists {}\n", tensors,
                      lists);
  }
  static constexpr const char* kTierNames[2] = {"T1 (asmjit)", "T2 (llvm)"};
  for (size_t k = 0; k < 2; ++k) {
    if (stats_.tier_compiled[k] == 0) continue;
    std::vector<double> v = stats_.tier_compile_samples[k];
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    os << fmt::format("  {}: {} traces compiled in {:.3f} ms (median {:.3f} ms), {} bytes of code\n", kTierNames[k],
                      stats_.tier_compiled[k], stats_.tier_compile_ms[k], v[v.size() / 2], stats_.tier_code_bytes[k]);
  }
  if (profile_) {
    // Sampled CPU time of the process (the background compiler's included,
    // under "elsewhere"), up to now.
    const auto s = profile_->samples();
    const double total = static_cast<double>(s[0] + s[1] + s[2]);
    auto share = [&](uint64_t n) { return total > 0 ? 100.0 * static_cast<double>(n) / total : 0.0; };
    os << fmt::format("  time in code (CPU time sampled every {:.0f} ms): T1 {:.0f} ms ({:.1f}%), T2 {:.0f} ms ({:.1f}%), "
                      "elsewhere {:.0f} ms ({:.1f}%: interpreter, recorder, compilers, runtime)\n",
                      TierProfile::kIntervalMs, static_cast<double>(s[1]) * TierProfile::kIntervalMs, share(s[1]),
                      static_cast<double>(s[2]) * TierProfile::kIntervalMs, share(s[2]),
                      static_cast<double>(s[0]) * TierProfile::kIntervalMs, share(s[0]));
  }
  if (stats_.tier_up_exits > 0)
    os << fmt::format("  tier-up: {} T1 traces swapped for T2 code ({} tier-up exits)\n", stats_.upgrades,
                      stats_.tier_up_exits);
  if (stats_.first_trace_ms >= 0)
    os << fmt::format("  warm-up: first trace compiled at {:.3f} ms, last at {:.3f} ms\n",
                      stats_.first_trace_ms, stats_.last_trace_ms);
  for (const auto& t : traces_) {
    const uint64_t exits = t->exits.total();
    std::string kind = t->is_side ? fmt::format("side trace of {} (exit #{})", t->parent, t->parent_snap)
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
                      "{:.3f} ms{}; entered {} times, {} exits\n",
                      t->id, script_name_, t->line, t->function, kind, t->ir.size(), t->recorded_size,
                      t->ir.snapshots().size(), t->compile_ms,
                      tiers.empty() ? "" : fmt::format(" ({}; runs T{})", tiers, t->tier), t->entries, exits);
    for (size_t s = 0; s < t->exits.size(); ++s)
      if (t->exits[s])
        os << fmt::format("      exit #{} to line {}: {} times\n", s, t->exit_lines[s], t->exits[s]);
  }
}

void TraceJit::dump(const Trace& t) const {
  std::error_code ec;
  std::filesystem::create_directories(dump_dir_, ec);
  std::string stem = std::filesystem::path(script_name_).stem().string();
  std::string base = fmt::format("{}/{}-{}-trace{}", dump_dir_, stem, t.line, t.id);
  std::ofstream(base + ".ir") << fmt::format("-- trace {} of {}:{} ({})\n", t.id, script_name_, t.line,
                                             t.function)
                              << print_ir(t.ir);
  // The code of each tier compiled so far: T1's assembly, T2's LLVM IR and
  // its object file (machine code: objdump -d).
  if (!t.code_text[0].empty()) std::ofstream(base + ".s") << t.code_text[0];
  if (!t.code_text[1].empty()) std::ofstream(base + ".ll") << t.code_text[1];
  if (!t.code_object.empty()) std::ofstream(base + ".o", std::ios::binary) << t.code_object;
  // -print-after-all style: the IR as recorded, then after each pass.
  for (size_t k = 0; k < t.pass_ir.size(); ++k)
    std::ofstream(fmt::format("{}.{}-{}.ir", base, k, t.pass_ir[k].first)) << t.pass_ir[k].second;
}

}  // namespace tessera::jit
