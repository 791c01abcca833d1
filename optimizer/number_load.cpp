#include "optimizer/number_load.h"

#include <vector>

#include "optimizer/ir_rewrite.h"
#include "tracer/ir_operands.h"

namespace tessera::jit {

namespace {

bool float_arith(IROp op) { return op == IROp::FADD || op == IROp::FSUB || op == IROp::FMUL || op == IROp::FDIV; }

// What one candidate load needs to become an LLOADN.
struct Candidate {
  std::vector<IRRef> convs;   // int loads: the CONVs that become the load
  std::vector<IRRef> guards;  // instructions whose snapshot moves to the load's
};

class NumberLoads {
 public:
  explicit NumberLoads(TraceIR& ir) : ir_(ir), users_(ir.size()), subst_(identity_subst(ir)) {
    for (IRRef r = 0; r < ir.size(); ++r) for_each_operand_ref(ir[r], [&](IRRef a) { users_[a].push_back(r); });
  }

  bool run() {
    bool changed = false;
    for (IRRef x = 0; x < ir_.size(); ++x) {
      const IRIns& in = ir_[x];
      // Only loads the recording saw in rows that mix the two types: ints
      // met by floats, and floats with ints beside them (kMixedRow). A float
      // row's element stays a typed load (one tag check, no conversion); an
      // int there later leaves the trace, and the side trace that follows
      // loads its number there.
      if (in.op != IROp::LLOAD) continue;
      if (in.type != IRType::Int && !(in.type == IRType::Float && (in.flags & kMixedRow))) continue;
      Candidate c;
      if (!qualifies(x, c)) continue;
      for (IRRef g : c.guards) ir_[g].snap = ir_[x].snap;
      for (IRRef conv : c.convs) subst_[conv] = x;
      ir_[x].op = IROp::LLOADN;
      ir_[x].type = IRType::Float;
      ir_[x].flags = 0;
      changed = true;
    }
    if (!changed) return false;
    std::vector<IRRef> order;
    for (IRRef r = 0; r < ir_.size(); ++r)
      if (subst_[r] == r && !ir_is_const(ir_[r].op)) order.push_back(r);
    ir_ = rebuild_trace(ir_, subst_, order);
    return true;
  }

 private:
  // The other operand of binary `u`, one of whose operands is `self`;
  // kNoRef when both are.
  IRRef other_operand(IRRef u, IRRef self) const {
    const IRIns& in = ir_[u];
    if (in.op1 == self && in.op2 == self) return kNoRef;
    return in.op1 == self ? in.op2 : in.op1;
  }

  // Whether `other` is a float to the interpreter as well: not a CONV nor
  // the float of an int constant (an int there), nor a number load (maybe
  // an int).
  bool float_to_interpreter(IRRef other) const {
    const IRRef o = resolve_ref(subst_, other);
    const IROp op = ir_[o].op;
    return op != IROp::LLOADN && op != IROp::CONV && !ir_.is_converted_int(o);
  }

  // Every binary float operation `value` (a mixed row's float load, or a
  // CONV of an int load) meets
  // means the same for an int converted early: `/` always does (the
  // interpreter divides two ints as floats); + - * only where the other
  // operand is a float to the interpreter too, since an int meeting an int
  // gives an int (which wraps, and prints without a point).
  bool meets_only_floats(IRRef value) const {
    for (IRRef u : users_[value]) {
      const IROp op = ir_[u].op;
      if (!float_arith(op) || op == IROp::FDIV) continue;
      const IRRef other = other_operand(u, value);
      if (other == kNoRef || !float_to_interpreter(other)) return false;
    }
    return true;
  }

  bool qualifies(IRRef x, Candidate& c) const {
    if (users_[x].empty()) return false;
    if (ir_[x].type == IRType::Float) {
      // Used only where an int converted early means the same.
      for (IRRef u : users_[x])
        if (!float_arith(ir_[u].op)) return false;
      return meets_only_floats(x) && snapshots_can_move(x, c);
    }
    for (IRRef u : users_[x]) {
      if (ir_[u].op != IROp::CONV || !meets_only_floats(u)) return false;
      c.convs.push_back(u);
    }
    return snapshots_can_move(x, c);
  }

  // Every later instruction whose snapshot names x can exit through x's
  // snapshot instead (see the header).
  bool snapshots_can_move(IRRef x, Candidate& c) const {
    const auto& snaps = ir_.snapshots();
    const uint16_t own = ir_[x].snap;
    if (own == kNoSnap || own >= snaps.size()) return false;
    const Snapshot& at_load = snaps[own];
    auto names_x = [&](const Snapshot& s) {
      for (const SnapshotEntry& e : s.entries)
        if (e.ref == x) return true;
      return false;
    };
    bool clean = true;  // nothing with an effect since x
    for (IRRef g = x + 1; g < ir_.size(); ++g) {
      const IRIns& in = ir_[g];
      if (in.snap != kNoSnap && in.snap < snaps.size() && in.snap != own && names_x(snaps[in.snap])) {
        const Snapshot& s = snaps[in.snap];
        if (!clean || ir_has_side_effect(in.op) || s.base_proto != at_load.base_proto ||
            s.frames.size() != at_load.frames.size())
          return false;
        for (size_t f = 0; f < s.frames.size(); ++f)
          if (s.frames[f].proto != at_load.frames[f].proto || s.frames[f].base != at_load.frames[f].base)
            return false;
        c.guards.push_back(g);
      }
      const IROpInfo& info = ir_op_info(in.op);
      if (ir_has_side_effect(in.op) || info.clobbers_memory || info.moves_base || in.op == IROp::LOOP) clean = false;
    }
    // A snapshot no instruction exits through may still name x: harmless,
    // as nothing exits through it. One that the loop's PHIs or a later
    // iteration would use is excluded above (LOOP ends `clean`).
    return true;
  }

  TraceIR& ir_;
  std::vector<std::vector<IRRef>> users_;
  std::vector<IRRef> subst_;  // the CONVs of int loads made number loads: the load
};

}  // namespace

bool NumberLoadPass::run(TraceIR& ir) { return NumberLoads(ir).run(); }

}  // namespace tessera::jit
