#include "optimizer/alloc_sink.h"

#include <algorithm>
#include <set>
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
  // Which can is a fixpoint: a list literal whose element is another list
  // literal made in the trace can be sunk only together with it (the inner
  // one is used by the outer one's arguments; the outer one's element must
  // be virtual, or the register that owns the inner list could drop it
  // before an exit builds the outer one). The first candidate left is sunk:
  // an inner literal's CALL comes before its outer one's.
  bool sink_one() {
    map_argument_chains();
    std::set<IRRef> cand;
    for (IRRef c = 0; c < ir_.size(); ++c)
      if (new_list_dest(c) >= 0) cand.insert(c);
    for (bool changed = true; changed;) {
      changed = false;
      for (auto it = cand.begin(); it != cand.end();) {
        if (sinkable(*it, cand)) {
          ++it;
        } else {
          it = cand.erase(it);
          changed = true;
        }
      }
    }
    return !cand.empty() && sink(*cand.begin());
  }

 private:
  // The register a NewList CALL at `c` writes (its result's owner), or -1.
  int32_t new_list_dest(IRRef c) const {
    const IRIns& call = ir_[c];
    if (call.op != IROp::CALL || call.op2 >= ir_.calls().size()) return -1;
    const CallTarget& target = ir_.calls()[call.op2];
    return target.is<call::NewList>() ? target.dest_slot : -1;
  }

  // The reload that types the CALL's result (SLOAD op2=1 of its register
  // right after it), or kNoRef.
  IRRef reload_of(IRRef c) const {
    const auto dest = static_cast<uint32_t>(new_list_dest(c));
    return c + 1 < ir_.size() && ir_[c + 1].op == IROp::SLOAD && ir_[c + 1].op1 == dest && ir_[c + 1].op2 == 1 &&
                   ir_[c + 1].type == IRType::List
               ? c + 1
               : kNoRef;
  }

  // owner_[q]: the CALL or sunk allocation whose argument chain CARG q
  // belongs to.
  void map_argument_chains() {
    owner_.assign(ir_.size(), kNoRef);
    for (IRRef r = 0; r < ir_.size(); ++r) {
      const IRIns& in = ir_[r];
      if (in.op != IROp::CALL && !ir_is_sunk_allocation(in.op)) continue;
      std::vector<IRRef> chain{in.op1};
      while (!chain.empty()) {
        const IRRef q = chain.back();
        chain.pop_back();
        if (q == kNoRef || q >= ir_.size() || ir_[q].op != IROp::CARG) continue;
        owner_[q] = r;
        chain.push_back(ir_[q].op1);
        chain.push_back(ir_[q].op2);
      }
    }
  }

  // Whether an element of a sunk list may be `v`: a scalar, a constant, an
  // allocation already sunk, or the reload of a list literal sunk with it.
  bool virtual_or_scalar(IRRef v, const std::set<IRRef>& cand) const {
    const IRIns& in = ir_[v];
    if (ir_is_const(in.op) || ir_is_sunk_allocation(in.op)) return true;
    if (in.type != IRType::Str && in.type != IRType::List && in.type != IRType::Tensor) return true;
    return v > 0 && cand.count(v - 1) && reload_of(v - 1) == v;
  }

  // Whether `v` is a list that will not exist on the trace: a sunk
  // allocation, or the reload of a candidate sunk with it.
  bool virtual_list(IRRef v, const std::set<IRRef>& cand) const {
    if (ir_is_sunk_allocation(ir_[v].op)) return true;
    return v > 0 && cand.count(v - 1) && reload_of(v - 1) == v;
  }

  // Whether an instruction after `q` reads it (snapshots do not count).
  bool read_by_code(IRRef q) const {
    std::vector<IRRef> ops;
    for (IRRef r = q + 1; r < ir_.size(); ++r) {
      operands(ir_[r], ops);
      if (std::find(ops.begin(), ops.end(), q) != ops.end()) return true;
    }
    return false;
  }

  // The CALL at `c` can be sunk if its other candidates `cand` are.
  bool sinkable(IRRef c, const std::set<IRRef>& cand) {
    const int32_t dest = new_list_dest(c);
    if (dest < 0) return false;
    for (IRRef a : carg_list(ir_, ir_[c].op1))
      if (!virtual_or_scalar(a, cand)) return false;
    const IRRef reload = reload_of(c);
    if (reload != kNoRef) {
      std::vector<IRRef> ops;
      for (IRRef q = reload + 1; q < ir_.size(); ++q) {
        const IRIns& in = ir_[q];
        operands(in, ops);
        if (std::find(ops.begin(), ops.end(), reload) == ops.end()) continue;
        if (const IRRef with = forwarded(in, reload, c); with != kUnforwardable) {
          // An element that is a list made in the trace (sunk, or to be
          // sunk with this one) stands in for the load: code that reads the
          // load would read a sunk list, which only exits may.
          if (with != kNoRef && virtual_list(with, cand) && read_by_code(q)) return false;
          continue;
        }
        if (in.op == IROp::CARG && owner_[q] != kNoRef && cand.count(owner_[q])) continue;  // an element of another
        return false;  // escapes
      }
      for (const Snapshot& s : ir_.snapshots())
        for (const SnapshotEntry& e : s.entries)
          if (e.ref == reload && e.slot != static_cast<uint32_t>(dest)) return false;  // a second name for it
    }
    return DeferredWrites(ir_).can_defer(static_cast<uint32_t>(dest), c);
  }

  // What replaces a use `in` of the list's reload: kNoRef for LLEN (the
  // element count), the element for LLOAD at a constant index in range
  // whose type it has; kUnforwardable otherwise.
  static constexpr IRRef kUnforwardable = kNoRef - 1;
  IRRef forwarded(const IRIns& in, IRRef reload, IRRef c) const {
    if (in.op == IROp::LLEN && in.op1 == reload) return kNoRef;
    if (in.op != IROp::LLOAD || in.op1 != reload || in.op2 == reload || ir_[in.op2].op != IROp::KINT)
      return kUnforwardable;
    const std::vector<IRRef> args = carg_list(ir_, ir_[c].op1);
    const int64_t k = ir_.const_int(in.op2);
    if (k < 0 || k >= static_cast<int64_t>(args.size()) || ir_[args[static_cast<size_t>(k)]].type != in.type)
      return kUnforwardable;
    return args[static_cast<size_t>(k)];
  }

  bool sink(IRRef c) {
    const auto dest = static_cast<uint32_t>(new_list_dest(c));
    const std::vector<IRRef> args = carg_list(ir_, ir_[c].op1);
    const IRRef reload = reload_of(c);
    std::vector<std::pair<IRRef, IRRef>> forward;  // (use, what replaces it; kNoRef: the count)
    if (reload != kNoRef) {
      std::vector<IRRef> ops;
      for (IRRef q = reload + 1; q < ir_.size(); ++q) {
        operands(ir_[q], ops);
        if (std::find(ops.begin(), ops.end(), reload) == ops.end()) continue;
        const IRRef with = forwarded(ir_[q], reload, c);
        if (with != kUnforwardable) forward.emplace_back(q, with);  // other uses: elements, renamed below
      }
    }

    // The register's write leaves the trace: exits after it build the list.
    DeferredWrites writes(ir_);
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
  std::vector<IRRef> owner_;
};

}  // namespace

bool AllocSinkPass::run(TraceIR& ir) {
  Sinker s(ir);
  bool changed = false;
  while (s.sink_one()) changed = true;
  // A sunk list is read only by exits and by the elements of other sunk
  // allocations (a list sunk with its inner lists): never by code.
  std::vector<IRRef> ops;
  for (IRRef q = 0; q < ir.size(); ++q) {
    if (ir[q].op == IROp::CARG || ir_is_sunk_allocation(ir[q].op)) continue;
    operands(ir[q], ops);
    for (IRRef o : ops)
      if (o < ir.size() && ir[o].op == IROp::VNEWLIST)
        throw_at_instruction(ir, q, "sink: reads a list whose allocation was sunk");
  }
  return changed;
}

}  // namespace tessera::jit
