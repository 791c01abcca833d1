#include "runtime/trace_jit.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "codegen/host/llvm/llvm_backend.h"
#include "deopt/exit_handler.h"
#include "vm/interp/vm.h"

namespace tessera::jit {

namespace {

// Side-trace recordings tried per exit before it is left to the interpreter.
constexpr uint32_t kMaxSideTries = 12;

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
      created_ms_(now_ms()) {}

TraceJit::~TraceJit() = default;

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
  if (traces_.size() >= static_cast<size_t>(params_.maxtrace)) return false;
  Op op = fn.code[loop_pc].op;
  if (op != Op::FORLOOP && op != Op::ITERLOOP && op != Op::LOOP) return false;
  if (blacklisted(&fn, loop_pc)) return false;
  recorder_ = std::make_unique<TraceRecorder>(&fn, loop_pc, limits());
  record_start_ms_ = now_ms();
  return true;
}

void TraceJit::watch_globals(uint8_t* watch, size_t n) {
  global_watch_ = watch;
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
      if (other->links[k] == t.fn) other->links[k] = nullptr;
}

void TraceJit::invalidate_global(uint32_t index) {
  for (auto& t : traces_) {
    if (t->dead) continue;
    const auto& assumed = t->ir.assumed_globals();
    if (std::find(assumed.begin(), assumed.end(), index) != assumed.end()) invalidate(*t);
  }
  if (index < num_globals_) global_watch_[index] = 0;  // no live trace assumes it now
}

bool TraceJit::start_function_recording(FunctionProto& fn) {
  ++stats_.hot_functions;
  if (recorder_ || fn.entry_trace >= 0) return false;
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
  if (recorder_->is_side()) {
    Trace& parent = *traces_[side_parent_];
    if (parent.side_tries[side_snap_] < 255) ++parent.side_tries[side_snap_];
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
  for (const Snapshot& s : trace->ir.snapshots()) {
    trace->max_entries = std::max<uint32_t>(trace->max_entries, static_cast<uint32_t>(s.entries.size()));
    if (s.base_proto) stack_need_ = std::max<uint32_t>(stack_need_, static_cast<uint32_t>(s.base_proto->nregs) + 1);
    for (const SnapshotFrame& f : s.frames)
      stack_need_ = std::max<uint32_t>(stack_need_, f.base + static_cast<uint32_t>(f.proto->nregs) + 1);
  }
  trace->exits.assign(trace->ir.snapshots().size(), 0);
  trace->links = std::make_unique<TraceFn[]>(trace->ir.snapshots().size());  // all null
  trace->side_tries.assign(trace->ir.snapshots().size(), 0);
  for (const Snapshot& s : trace->ir.snapshots()) {
    const FunctionProto& base = s.base_proto ? *s.base_proto : *trace->proto;
    trace->exit_lines.push_back(line_of(s.frames.empty() ? base : *s.frames.back().proto, s.pc));
  }
  stats_.ir_instructions += trace->ir.size();
  try {
    // The LLVM JIT is created with the first trace: scripts that never get
    // hot do not pay for it.
    if (!backend_) backend_ = std::make_unique<LlvmBackend>(2);
    if (trace->ir.snapshots().size() > 0xFFFF || trace->id > 0xFFFF)
      throw std::runtime_error("too many snapshots or traces for the exit code");
    ExitLinking linking;
    linking.code_base = trace->id << 16;
    linking.links = trace->links.get();
    CompiledTrace code = backend_->compile(
        trace->ir,
        fmt::format("trace{}_{}_{}", trace->id, trace->function == "<main>" ? "main" : trace->function,
                    trace->line),
        linking, trace->proto, global_watch_);
    trace->fn = code.fn;
    trace->llvm_ir = std::move(code.llvm_ir);
    trace->compile_ms = code.compile_ms;
  } catch (const std::exception& e) {
    // A trace the backend cannot compile is dropped; the loop stays interpreted.
    ++stats_.aborts[static_cast<int>(AbortReason::NYIBytecode)];
    stats_.last_abort[static_cast<int>(AbortReason::NYIBytecode)] = e.what();
    if (trace->is_side) {
      Trace& parent = *traces_[trace->parent];
      if (parent.side_tries[trace->parent_snap] < 255) ++parent.side_tries[trace->parent_snap];
    }
    return;
  }
  stats_.compile_ms += trace->compile_ms;
  ++stats_.compiled;
  stats_.last_trace_ms = now_ms() - created_ms_;
  if (stats_.first_trace_ms < 0) stats_.first_trace_ms = stats_.last_trace_ms;
  if (trace->link == static_cast<int32_t>(trace->id))
    trace->links[trace->link_snap] = trace->fn;
  else if (trace->link >= 0 && !traces_[static_cast<size_t>(trace->link)]->dead)
    trace->links[trace->link_snap] = traces_[static_cast<size_t>(trace->link)]->fn;
  for (uint32_t g : trace->ir.assumed_globals())
    if (g < num_globals_) global_watch_[g] = 1;
  if (trace->is_side) {
    // Hang it off its parent's exit: the next time that exit is taken the
    // runtime goes straight into it.
    traces_[trace->parent]->links[trace->parent_snap] = trace->fn;
    ++traces_[trace->root]->sides;
    ++stats_.side_traces;
  } else if (trace->kind == Trace::Kind::Function) {
    // Calls of the function enter the trace from now on.
    trace->proto->entry_trace = static_cast<int32_t>(trace->id);
  } else {
    // Patch the loop's back-edge so that the interpreter enters the trace.
    FunctionProto* p = trace->proto;
    p->code[trace->loop_pc].op = entering_op(p->code[trace->loop_pc].op);
    p->loop_traces.emplace_back(trace->loop_pc, trace->id);
  }
  exit_buffer_.resize(std::max<size_t>(exit_buffer_.size(), trace->max_entries + 1));
  if (!dump_dir_.empty()) dump(*trace);
  traces_.push_back(std::move(trace));
}

uint32_t TraceJit::trace_stack_need(uint32_t /*id*/) const { return stack_need_; }

void TraceJit::run_trace(uint32_t id, Value* base, Value* globals, FrameRegion& frames, TraceExit& exit) {
  JitContext ctx;
  ctx.vm = &vm_;
  ctx.base = base;
  ctx.globals = globals;
  ctx.frames = &frames;
  ctx.jit = this;
  ctx.global_stored = [](void* jit, uint32_t index) { static_cast<TraceJit*>(jit)->invalidate_global(index); };
  ++traces_[id]->entries;
  // Linked exits go from trace to trace natively (tail calls); what comes
  // back is the exit that has no link, with the registers already written.
  const uint32_t code = traces_[id]->fn(base, globals, exit_buffer_.data(), &ctx);
  Trace& t = *traces_[code >> 16];
  const uint32_t snap_no = code & 0xFFFF;
  const Snapshot& snap = t.ir.snapshots()[snap_no];
  ++t.exits[snap_no];
  exit.pcs = resume_pcs(snap);
  exit.frames.clear();
  for (const SnapshotFrame& f : snap.frames) exit.frames.push_back(TraceExit::Frame{f.proto, f.base});
  exit.start_recording = false;
  maybe_start_side_trace(t, snap_no, exit);
}

void TraceJit::maybe_start_side_trace(Trace& t, uint32_t snap_no, TraceExit& exit) {
  // An exit taken `hotexit` times gets a side trace (LuaJIT's policy: a few
  // tries per exit with back-off, a cap per root trace). Exits inside
  // inlined frames are left to the interpreter for now.
  const Snapshot& snap = t.ir.snapshots()[snap_no];
  if (recorder_ || !snap.frames.empty()) return;
  // Each failed try doubles the exits needed for the next one (a recording
  // often fails only until some other loop has its trace).
  const uint32_t tries = t.side_tries[snap_no];
  if (tries >= kMaxSideTries) return;
  if (t.exits[snap_no] < static_cast<uint64_t>(params_.hotexit) << tries) return;
  if (traces_[t.root]->sides >= static_cast<uint32_t>(params_.maxside)) return;
  if (traces_.size() >= static_cast<size_t>(params_.maxtrace)) return;
  recorder_ = std::make_unique<TraceRecorder>(snap.base_proto ? snap.base_proto : t.proto, snap.pc, limits(),
                                              TraceRecorder::SideTrace{});
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
  os << fmt::format("  time: recording {:.3f} ms, compiling {:.3f} ms; {} IR instructions\n",
                    stats_.record_ms, stats_.compile_ms, stats_.ir_instructions);
  if (stats_.first_trace_ms >= 0)
    os << fmt::format("  warm-up: first trace compiled at {:.3f} ms, last at {:.3f} ms\n",
                      stats_.first_trace_ms, stats_.last_trace_ms);
  for (const auto& t : traces_) {
    uint64_t exits = 0;
    for (uint64_t e : t->exits) exits += e;
    std::string kind = t->is_side ? fmt::format("side trace of {} (exit #{})", t->parent, t->parent_snap)
                       : t->kind == Trace::Kind::Function ? std::string("function trace")
                                                          : std::string("root trace");
    if (t->link >= 0) kind += fmt::format(", links to {}", t->link);
    os << fmt::format("    trace {}  {}:{} in {}, {}: {} IR instructions, {} snapshots, compiled in "
                      "{:.3f} ms; entered {} times, {} exits\n",
                      t->id, script_name_, t->line, t->function, kind, t->ir.size(),
                      t->ir.snapshots().size(), t->compile_ms, t->entries, exits);
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
  std::ofstream(base + ".ll") << t.llvm_ir;
}

}  // namespace tessera::jit
