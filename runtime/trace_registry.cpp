#include "runtime/trace_registry.h"

#include <algorithm>
#include <optional>

#include "tracer/exit_slot_types.h"

namespace tessera::jit {

Trace& TraceRegistry::add(std::unique_ptr<Trace> t) {
  traces_.push_back(std::move(t));
  return *traces_.back();
}

bool TraceRegistry::any_pending() const {
  return std::any_of(traces_.begin(), traces_.end(), [](const auto& t) { return t->pending; });
}

bool TraceRegistry::pending_root(const RootKey& root) const {
  const Trace::Kind kind = root.is_function() ? Trace::Kind::Function : Trace::Kind::Loop;
  return std::any_of(traces_.begin(), traces_.end(), [&](const auto& t) {
    return t->pending && t->kind == kind && t->proto == root.proto && t->loop_pc == root.loop_pc;
  });
}

bool TraceRegistry::pending_side(uint32_t parent, uint32_t snap) const {
  return std::any_of(traces_.begin(), traces_.end(), [&](const auto& t) {
    return t->pending && t->is_side && t->parent == parent && t->parent_snap == snap;
  });
}

bool TraceRegistry::fits_exit_code(const Trace& t) {
  return t.ir.snapshots().size() < kTierUpExit && t.id <= 0xFFFF;
}

ExitLinking TraceRegistry::exit_linking(Trace& t) {
  ExitLinking linking;
  linking.code_base = t.id << 16;
  linking.links = t.links.get();  // shared: both tiers' exits read the same links
  linking.passed_links = t.passed_links.get();
  return linking;
}

void TraceRegistry::size_exit_tables(Trace& t) {
  stack_need_ = std::max(stack_need_, t.max_slot + 1);
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
  if (stack_need_out_) *stack_need_out_ = std::max(*stack_need_out_, stack_need_);
  t.exits.reset(t.ir.snapshots().size());
  t.links = std::make_unique<NativeTrace[]>(t.ir.snapshots().size());  // all null
  if (pass_registers_) t.passed_links = std::make_unique<NativeTrace[]>(t.ir.snapshots().size());
  else t.passed_links.reset();
  t.exit_lines.clear();
  t.returns.clear();
  for (const Snapshot& s : t.ir.snapshots()) {
    const FunctionProto& base = s.base_proto ? *s.base_proto : *t.proto;
    t.exit_lines.push_back(source_line(s.frames.empty() ? base : *s.frames.back().proto, s.pc));
    const bool own_frame = s.base_proto == nullptr && s.frames.empty() && s.pc < base.code.size();
    const bool ret = own_frame && (base.code[s.pc].op == Op::RET || base.code[s.pc].op == Op::RETNIL);
    t.returns.push_back(ret ? s.pc : Trace::kNotReturn);
  }
}

void TraceRegistry::set_code(Trace& t, const CompiledTrace& code, int tier) {
  t.fn = code.fn;
  t.native = code.native;
  t.native_passed = code.native_passed;
  t.exit_plans = code.exit_plans;
  t.tier = static_cast<uint8_t>(tier);
  size_t need = 1;
  for (const ExitPlan& p : *code.exit_plans) need = std::max(need, p.values.size());
  if (exit_buffer_.size() < need) exit_buffer_.resize(need);
}

void TraceRegistry::watch_globals(uint8_t* watch, const Value* globals, size_t n) {
  global_watch_ = watch;
  globals_ = globals;
  num_globals_ = n;
}

void TraceRegistry::forget_globals() { watch_globals(nullptr, nullptr, 0); }

bool TraceRegistry::stale(const Trace& t) const {
  if (t.dead || (t.is_side && traces_[t.parent]->dead) ||
      (t.link >= 0 && t.link != static_cast<int32_t>(t.id) && traces_[static_cast<size_t>(t.link)]->dead))
    return true;
  return std::any_of(t.ir.assumed_globals().begin(), t.ir.assumed_globals().end(), [&](const auto& a) {
    const Value* g = a.index < num_globals_ && globals_ ? &globals_[a.index] : nullptr;
    return (g == nullptr ? nullptr : TraceIR::assumption_of(*g)) != a.value;
  });
}

void TraceRegistry::link(Trace& t) {
  if (t.link == static_cast<int32_t>(t.id))
    t.links[t.link_snap] = t.native;
  else if (t.link >= 0)
    t.links[t.link_snap] = traces_[static_cast<size_t>(t.link)]->native;
  for (const auto& a : t.ir.assumed_globals())
    if (a.index < num_globals_) global_watch_[a.index] = 1;
  if (t.is_side) {
    // Hang it off its parent's exit: the next time that exit is taken the
    // runtime goes straight into it.
    // With the exit's passed values in registers where it takes them (only
    // the trace recorded from that exit does: trace_abi.h).
    Trace& parent = *traces_[t.parent];
    parent.links[t.parent_snap] = t.native;
    if (parent.passed_links) parent.passed_links[t.parent_snap] = t.native_passed;
    ++traces_[t.root]->sides;
  } else if (t.kind == Trace::Kind::Function) {
    // Calls of the function enter the trace from now on.
    t.proto->entry_trace = static_cast<int32_t>(t.id);
  } else {
    // Patch the loop's back-edge so that the interpreter enters the trace.
    FunctionProto* p = t.proto;
    p->code[*t.loop_pc].op = entering_op(p->code[*t.loop_pc].op);
    p->loop_traces.emplace_back(*t.loop_pc, t.id);
  }
}

Trace* TraceRegistry::side_trace_to_share(const Trace& parent, uint32_t snap,
                                          const std::unordered_map<uint32_t, IRType>& proven) const {
  const Snapshot& exit = parent.ir.snapshots()[snap];
  const FunctionProto* resumes_in = exit.base_proto ? exit.base_proto : parent.proto;
  // An exit back to where its own trace starts (an entry guard failed) made
  // no progress: linked to a trace that starts there too, whose entry guard
  // may fail in turn, the two would hand the same state to and fro forever.
  if (exit.base_proto == nullptr && exit.pc == parent.start_pc) return nullptr;
  auto same_frames = [&](const std::vector<SnapshotFrame>& a) {
    return std::equal(a.begin(), a.end(), exit.frames.begin(), exit.frames.end(), [](const auto& x, const auto& y) {
      return x.proto == y.proto && x.base == y.base && x.call_pc == y.call_pc;
    });
  };
  std::optional<std::unordered_map<uint32_t, IRRef>> exit_consts;  // made when first needed
  for (const auto& o : traces_) {
    const Trace& x = *o;
    if (!x.is_side || x.dead || x.pending || x.native == nullptr || x.proto != resumes_in ||
        x.start_pc != exit.pc || &x == &parent)
      continue;
    const Snapshot& from = traces_[x.parent]->ir.snapshots()[x.parent_snap];
    if ((from.base_proto != nullptr) != (exit.base_proto != nullptr) || !same_frames(from.frames)) continue;
    // Its unguarded loads must have the types this exit proves, and the
    // registers it took as its parent's constants (guarded) the same values.
    const TraceIR& xp = traces_[x.parent]->ir;
    const auto x_consts = exit_slot_constants(xp, static_cast<uint16_t>(x.parent_snap));
    bool types_hold = true;
    for (IRRef r = 0; r < x.ir.size() && types_hold; ++r) {
      const IRIns& in = x.ir[r];
      if (!sload_unguarded(in)) continue;
      auto known = proven.find(in.op1);
      types_hold = known != proven.end() && known->second == in.type;
      if (auto k = x_consts.find(in.op1); types_hold && k != x_consts.end()) {
        if (!exit_consts) exit_consts = exit_slot_constants(parent.ir, static_cast<uint16_t>(snap));
        auto mine = exit_consts->find(in.op1);
        types_hold = mine != exit_consts->end() && same_constant(parent.ir, mine->second, xp, k->second);
      }
    }
    if (types_hold) return o.get();
  }
  return nullptr;
}

void TraceRegistry::share(Trace& parent, uint32_t snap, Trace& side) {
  parent.links[snap] = side.native;  // its memory entry: it was recorded from another exit
  if (parent.passed_links) parent.passed_links[snap] = nullptr;
  parent.shared_exits.emplace_back(snap, side.id);
}

void TraceRegistry::retarget(NativeTrace from, NativeTrace to) {
  if (from == nullptr) return;
  for (auto& other : traces_)
    for (size_t k = 0; k < other->ir.snapshots().size(); ++k) {
      if (other->links[k] == from) other->links[k] = to;
      if (other->passed_links && other->passed_links[k] == from) other->passed_links[k] = to;
    }
}

void TraceRegistry::invalidate(Trace& t) {
  t.dead = true;
  if (t.kind == Trace::Kind::Loop) {
    // The back-edge counts again; the loop may be recorded anew.
    Instr& edge = t.proto->code[*t.loop_pc];
    edge.op = back_edge_op(edge.op);
    std::erase_if(t.proto->loop_traces, [&](const auto& e) { return e.second == t.id; });
  } else if (t.kind == Trace::Kind::Function && t.proto->entry_trace == static_cast<int32_t>(t.id)) {
    t.proto->entry_trace = -1;
  }
  // No exit goes to it any more (its side traces are reachable only from it).
  retarget(t.native, nullptr);
  retarget(t.native_passed, nullptr);
}

uint32_t TraceRegistry::invalidate_global(uint32_t index) {
  uint32_t n = 0;
  for (auto& t : traces_) {
    if (t->dead || t->pending) continue;  // a pending trace is checked when it is installed
    const auto& assumed = t->ir.assumed_globals();
    if (std::any_of(assumed.begin(), assumed.end(), [&](const auto& a) { return a.index == index; })) {
      invalidate(*t);
      ++n;
    }
  }
  if (index < num_globals_) global_watch_[index] = 0;  // no live trace assumes it now
  return n;
}

}  // namespace tessera::jit
