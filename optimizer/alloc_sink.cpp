#include "optimizer/alloc_sink.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "optimizer/ir_rewrite.h"
#include "tracer/register_liveness.h"

namespace tessera::jit {
namespace {

bool may_exit(const IRIns& ins) {
  return ins.snap != kNoSnap && (ir_is_guard(ins.op) || ins.op == IROp::CALL);
}

// The references `ins` reads (CARG chains through their nodes).
void operands(const IRIns& ins, std::vector<IRRef>& out) {
  out.clear();
  const IROpInfo& info = ir_op_info(ins.op);
  if (info.op1 == OperandKind::ref && ins.op1 != kNoRef) out.push_back(ins.op1);
  if (info.op2 == OperandKind::ref && ins.op2 != kNoRef) out.push_back(ins.op2);
}

const SnapshotEntry* entry_for(const Snapshot& s, uint32_t slot) {
  for (const SnapshotEntry& e : s.entries)
    if (e.slot == slot) return &e;
  return nullptr;
}

class Sinker {
 public:
  explicit Sinker(TraceIR& ir) : ir_(ir), loop_(ir.loop_ref()) {}

  // Sinks the first NewList call that can be sunk; false if none can.
  bool sink_one() {
    for (IRRef c = 0; c < ir_.size(); ++c)
      if (try_sink(c)) return true;
    return false;
  }

 private:
  // Whether the interpreter may read `slot` when it resumes through `s`
  // (unknown: yes).
  bool live(const Snapshot& s, uint32_t slot) const {
    if (ir_.function() == nullptr || !s.frames.empty()) return true;
    const FunctionProto& fn = s.base_proto ? *s.base_proto : *ir_.function();
    return register_live_at(fn, s.pc, slot);
  }

  bool try_sink(IRRef c) {
    const IRIns& call = ir_[c];
    if (call.op != IROp::CALL || call.op2 >= ir_.calls().size()) return false;
    const CallTarget& target = ir_.calls()[call.op2];
    if (target.kind != CallTarget::Kind::NewList || target.dest_slot < 0) return false;
    if (loop_ != kNoRef && c < loop_) return false;  // would stay materialized across iterations
    const auto dest = static_cast<uint32_t>(target.dest_slot);
    const std::vector<IRRef> args = carg_list(ir_, call.op1);
    const IRRef reload = c + 1 < ir_.size() && ir_[c + 1].op == IROp::SLOAD && ir_[c + 1].op1 == dest &&
                                 ir_[c + 1].op2 == 1 && ir_[c + 1].type == IRType::List
                             ? c + 1
                             : kNoRef;

    // Every use of the list must be one we can forward: (instruction, what
    // replaces it; kNoRef: the element count).
    std::vector<std::pair<IRRef, IRRef>> forward;
    std::vector<IRRef> ops;
    if (reload != kNoRef) {
      for (IRRef q = reload + 1; q < ir_.size(); ++q) {
        const IRIns& in = ir_[q];
        operands(in, ops);
        if (std::find(ops.begin(), ops.end(), reload) == ops.end()) continue;
        if (in.op == IROp::LLEN && in.op1 == reload) {
          forward.emplace_back(q, kNoRef);
        } else if (in.op == IROp::LLOAD && in.op1 == reload && in.op2 != reload && ir_[in.op2].op == IROp::KINT &&
                   ir_.const_int(in.op2) >= 0 && ir_.const_int(in.op2) < static_cast<int64_t>(args.size()) &&
                   ir_[args[static_cast<size_t>(ir_.const_int(in.op2))]].type == in.type) {
          forward.emplace_back(q, args[static_cast<size_t>(ir_.const_int(in.op2))]);
        } else {
          return false;  // escapes
        }
      }
      for (const Snapshot& s : ir_.snapshots())
        for (const SnapshotEntry& e : s.entries)
          if (e.ref == reload && e.slot != dest) return false;  // a second name for it
    }

    // Which snapshots exits use where: before the allocation (in the loop
    // body) the register must not matter; after it, up to the next write of
    // the register, exits must build the list.
    std::set<uint16_t> before, after;
    bool redefined = false;
    for (IRRef q = 0; q < ir_.size(); ++q) {
      const IRIns& in = ir_[q];
      // A frame push or pop hands the registers over without an exit: the
      // pushed callee's caller reads its registers from memory when the
      // callee returns, so the list would have to exist there.
      if (q > c && (in.op == IROp::FPUSH || in.op == IROp::FPOP)) return false;
      if (q > c && !redefined) {
        const bool writes = (in.op == IROp::SSTORE && in.op1 == dest) ||
                            (in.op == IROp::CALL && in.op2 < ir_.calls().size() &&
                             ir_.calls()[in.op2].dest_slot == static_cast<int32_t>(dest));
        if (writes) redefined = true;
      }
      if (q == c || q == reload || !may_exit(in)) continue;
      if (q < c || redefined) {
        before.insert(in.snap);
        if (q < c && loop_ != kNoRef && q > loop_) {
          const Snapshot& s = ir_.snapshots()[in.snap];
          if (entry_for(s, dest) == nullptr && live(s, dest)) return false;  // wants last iteration's list
        }
      } else {
        after.insert(in.snap);
      }
    }
    for (uint16_t s : after)
      if (before.count(s)) return false;  // one snapshot on both sides

    // Commit: the CALL becomes the sunk allocation, its reload goes, and the
    // snapshots after it name it where the register is live.
    const IRRef named = reload != kNoRef ? reload : c;
    for (uint16_t sn : after) {
      Snapshot& s = ir_.snapshots()[sn];
      const SnapshotEntry* e = entry_for(s, dest);
      if (e != nullptr || !live(s, dest)) continue;  // written since, named already, or dead
      auto at = std::lower_bound(s.entries.begin(), s.entries.end(), dest,
                                 [](const SnapshotEntry& x, uint32_t slot) { return x.slot < slot; });
      s.entries.insert(at, SnapshotEntry{dest, named});
    }
    IRIns& v = ir_[c];
    v.op = IROp::VNEWLIST;
    v.type = IRType::List;
    v.op2 = static_cast<uint32_t>(args.size());
    v.snap = kNoSnap;
    const IRRef count = ir_.kint(static_cast<int64_t>(args.size()));
    std::vector<IRRef> subst = identity_subst(ir_);
    std::vector<bool> drop(ir_.size(), false);
    for (const auto& [q, with] : forward) {
      subst[q] = with == kNoRef ? count : with;
      drop[q] = true;
    }
    if (reload != kNoRef) {
      subst[reload] = c;
      drop[reload] = true;
    }
    std::vector<IRRef> order;
    for (IRRef q = 0; q < ir_.size(); ++q)
      if (!ir_is_const(ir_[q].op) && !drop[q]) order.push_back(q);
    ir_ = rebuild_trace(ir_, subst, order);
    loop_ = ir_.loop_ref();
    return true;
  }

  TraceIR& ir_;
  IRRef loop_;
};

}  // namespace

bool AllocSinkPass::run(TraceIR& ir) {
  Sinker s(ir);
  bool changed = false;
  while (s.sink_one()) changed = true;
  return changed;
}

}  // namespace tessera::jit
