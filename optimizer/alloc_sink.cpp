#include "optimizer/alloc_sink.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "optimizer/deferred_writes.h"
#include "optimizer/ir_rewrite.h"
#include "tracer/ir_operands.h"

namespace tessera::jit {
namespace {

// The references `ins` reads (CARG chains through their nodes).
void operands(const IRIns& ins, std::vector<IRRef>& out) { operand_refs(ins, out); }

class Sinker {
 public:
  explicit Sinker(TraceIR& ir) : ir_(ir) {}

  // Sinks the first NewList call that can be sunk; false if none can.
  bool sink_one() {
    for (IRRef c = 0; c < ir_.size(); ++c)
      if (try_sink(c)) return true;
    return false;
  }

 private:
  bool try_sink(IRRef c) {
    const IRIns& call = ir_[c];
    if (call.op != IROp::CALL || call.op2 >= ir_.calls().size()) return false;
    const CallTarget& target = ir_.calls()[call.op2];
    if (target.kind != CallTarget::Kind::NewList || target.dest_slot < 0) return false;
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

    // The register's write leaves the trace: exits after it build the list.
    DeferredWrites writes(ir_);
    if (!writes.can_defer(dest, c)) return false;
    writes.defer(dest, c, reload != kNoRef ? reload : c);
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
    return true;
  }

  TraceIR& ir_;
};

}  // namespace

bool AllocSinkPass::run(TraceIR& ir) {
  Sinker s(ir);
  bool changed = false;
  while (s.sink_one()) changed = true;
  return changed;
}

}  // namespace tessera::jit
