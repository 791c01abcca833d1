#include "optimizer/loop_peel.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "optimizer/cse.h"
#include "optimizer/dce.h"
#include "optimizer/guard_elim.h"
#include "optimizer/loop_predicate.h"
#include "tracer/ir_operands.h"

namespace tessera::jit {
namespace {

// The loop body's instructions, PHIs and constants not counted.
size_t body_work(const TraceIR& ir) {
  const IRRef loop = ir.loop_ref();
  size_t n = 0;
  for (IRRef r = loop == kNoRef ? ir.size() : loop + 1; r < ir.size(); ++r)
    n += ir[r].op != IROp::PHI && !ir_is_const(ir[r].op);
  return n;
}

// A copy of `ir` after the passes that follow peeling and remove work.
TraceIR cleaned(const TraceIR& ir) {
  TraceIR copy = ir;
  GuardElimPass().run(copy);
  CsePass().run(copy);
  DcePass().run(copy);
  return copy;
}

[[noreturn]] void malformed(const std::string& what) { throw std::invalid_argument("peel: " + what); }

// The trace being peeled and the three ways its references are renumbered
// into the new one: `pre` for constants and the preamble (a PHI's first
// operand there is the entry value), `peeled` for the peeled body, `body`
// for the loop body (a PHI's first operand there is the carried value).
class Peeler {
 public:
  explicit Peeler(const TraceIR& ir) : ir_(ir), n_(ir.size()), loop_(ir.loop_ref()) {}

  // The peeled trace, or false when this trace is left alone.
  bool peel(TraceIR& out) {
    if (loop_ == kNoRef) return false;
    if (!analyse()) return false;
    build(out);
    return true;
  }

 private:
  bool in_body(IRRef r) const { return r > loop_ && r < n_ && !ir_is_const(ir_[r].op) && ir_[r].op != IROp::PHI; }
  // Constants and the preamble: the same value wherever it is used.
  bool before_loop(IRRef r) const { return r < n_ && (r < loop_ || ir_is_const(ir_[r].op)); }

  // Checks the shape, collects the body, the PHIs and the snapshots' users.
  bool analyse() {
    const size_t nsnaps = ir_.snapshots().size();
    used_before_.assign(nsnaps, false);
    used_in_body_.assign(nsnaps, false);
    for (IRRef r = 0; r < n_; ++r) {
      const IRIns& in = ir_[r];
      if (ir_is_const(in.op)) continue;
      if (in.snap != kNoSnap && in.snap >= nsnaps)
        malformed("instruction " + std::to_string(r) + " names snapshot #" + std::to_string(in.snap) +
                  ", which does not exist");
      if (r < loop_) {
        if (in.op == IROp::PHI) malformed("PHI " + std::to_string(r) + " is before LOOP");
        if (in.snap != kNoSnap) used_before_[in.snap] = true;
      } else if (r > loop_) {
        if (in.op == IROp::PHI) {
          phis_.push_back(r);
          continue;
        }
        if (!ir_op_info(in.op).peelable) return false;  // ir.def says which
        body_.push_back(r);
        if (in.snap != kNoSnap) used_in_body_[in.snap] = true;
      }
    }
    if (phis_.empty()) return false;  // nothing carried: the body learns nothing
    std::map<IRRef, IRRef> op1_seen;
    for (IRRef p : phis_) {
      const IRIns& phi = ir_[p];
      if (phi.op1 >= loop_ || ir_is_const(ir_[phi.op1].op))
        malformed("PHI " + std::to_string(p) + ": its first operand must be an instruction before LOOP");
      if (phi.op2 >= n_) malformed("PHI " + std::to_string(p) + ": its second operand does not exist");
      // A constant, an invariant or another PHI's entry value (loop_peel.h).
      if (!in_body(phi.op2) || ir_[phi.op2].type == IRType::None) return false;
      if (!op1_seen.emplace(phi.op1, p).second) return false;  // two PHIs on one value
    }
    // A snapshot that guards both before LOOP and in the body exit through
    // mean the same in both places after peeling: no carried or body values.
    for (size_t k = 0; k < nsnaps; ++k) {
      if (!used_before_[k] || !used_in_body_[k]) continue;
      for (const SnapshotEntry& e : ir_.snapshots()[k].entries)
        if (!before_loop(e.ref) || op1_seen.count(e.ref)) return false;
    }
    size_t appended = 0;
    for (size_t k = 0; k < nsnaps; ++k) appended += used_in_body_[k];
    // Guards number snapshots in 16 bits (kNoSnap is none), and the exit
    // code reserves 0xFFFF (the runtime discards traces that reach it);
    // one more for the header snapshot.
    if (nsnaps + appended + 1 >= kNoSnap) return false;
    return true;
  }

  IRRef map_pre(IRRef r) const {
    if (r >= n_ || pre_[r] == kNoRef) malformed("reference " + std::to_string(r) + " is not before LOOP");
    return pre_[r];
  }
  IRRef map_peeled(IRRef r) const {
    if (r < n_ && r > loop_) {
      if (peeled_[r] == kNoRef) malformed("reference " + std::to_string(r) + " is used before it is defined");
      return peeled_[r];
    }
    return map_pre(r);
  }
  IRRef map_body(IRRef r) const {
    if (r < n_ && r > loop_) {
      if (body_ref_[r] == kNoRef) malformed("reference " + std::to_string(r) + " is used before it is defined");
      return body_ref_[r];
    }
    if (r < n_ && carried_[r] != kNoRef) return carried_[r];
    return map_pre(r);
  }

  template <typename Map>
  IRRef copy(TraceIR& out, IRRef r, Map map, uint16_t snap) const {
    return emit_renumbered(out, ir_[r], map, snap);
  }

  void build(TraceIR& out) {
    pre_ = copy_constants(ir_, out);
    peeled_.assign(n_, kNoRef);
    body_ref_.assign(n_, kNoRef);
    carried_.assign(n_, kNoRef);
    auto pre = [this](IRRef r) { return map_pre(r); };
    auto peeled = [this](IRRef r) { return map_peeled(r); };
    auto body = [this](IRRef r) { return map_body(r); };

    for (IRRef r = 0; r < loop_; ++r)
      if (!ir_is_const(ir_[r].op)) pre_[r] = copy(out, r, pre, ir_[r].snap);

    // The peeled iteration; its guards exit through the appended copies.
    const size_t nsnaps = ir_.snapshots().size();
    std::vector<uint16_t> peeled_snap(nsnaps, kNoSnap);
    uint16_t next = static_cast<uint16_t>(nsnaps);
    for (size_t k = 0; k < nsnaps; ++k)
      if (used_in_body_[k]) peeled_snap[k] = next++;
    for (IRRef r : body_) {
      const uint16_t s = ir_[r].snap;
      peeled_[r] = copy(out, r, peeled, s == kNoSnap ? kNoSnap : peeled_snap[s]);
    }
    const IRRef new_loop = out.emit(IROp::LOOP, IRType::None);

    // In the body, a PHI's first operand names the value the peeled
    // iteration carries in: the peeled copy of its second operand. PHIs
    // with the same second operand get the same one (and merge below).
    for (IRRef p : phis_) carried_[ir_[p].op1] = peeled_[ir_[p].op2];
    for (IRRef r : body_) body_ref_[r] = copy(out, r, body, ir_[r].snap);
    std::map<IRRef, bool> emitted;  // new first operands
    for (IRRef p : phis_) {
      const IRIns& phi = ir_[p];
      const IRRef a = peeled_[phi.op2];
      if (!emitted.emplace(a, true).second) continue;
      out.emit(IROp::PHI, phi.type, a, body_ref_[phi.op2]);
    }

    // Snapshots keep their numbers; the peeled copies follow.
    std::vector<IRRef> at_orig(n_ + 1, kNoRef), at_peeled(n_ + 1, kNoRef);
    at_orig[n_] = static_cast<IRRef>(out.size());
    at_peeled[n_] = new_loop;
    for (IRRef r = n_; r-- > 0;) {
      const bool kept = !ir_is_const(ir_[r].op) && ir_[r].op != IROp::PHI;
      at_orig[r] = !kept ? at_orig[r + 1] : r < loop_ ? pre_[r] : r == loop_ ? new_loop : body_ref_[r];
      at_peeled[r] = r > loop_ && kept ? peeled_[r] : at_peeled[r + 1];
    }
    auto where = [&](const std::vector<IRRef>& at, uint32_t ir_ref) { return at[std::min<size_t>(ir_ref, n_)]; };
    for (size_t k = 0; k < nsnaps; ++k) {
      Snapshot s = ir_.snapshots()[k];
      // Not exited from the body (snapshot 0, those of guards before LOOP,
      // unused ones that name no body value): a PHI's first operand is the
      // entry value. Otherwise the body's meaning.
      bool before = !used_in_body_[k];
      for (const SnapshotEntry& e : s.entries) before = before && before_loop(e.ref);
      if (before)
        renumber_snapshot_entries(s, pre);
      else
        renumber_snapshot_entries(s, body);
      s.ir_ref = where(at_orig, s.ir_ref);
      out.snapshots().push_back(std::move(s));
    }
    for (size_t k = 0; k < nsnaps; ++k) {
      if (!used_in_body_[k]) continue;
      Snapshot s = ir_.snapshots()[k];
      renumber_snapshot_entries(s, peeled);
      s.ir_ref = s.ir_ref > loop_ ? where(at_peeled, s.ir_ref) : at_peeled[loop_ + 1];
      s.exit_count = 0;
      out.snapshots().push_back(std::move(s));
    }
    const bool header = add_header_snapshot(out, new_loop);
    clamp_snapshot_starts(out);
    out.copy_tables_from(ir_);
    if (header) out.set_header_snapshot(static_cast<uint16_t>(out.snapshots().size() - 1));
  }

  // Where every PHI carried an entry SLOAD's slot (what T1's tier-up exit
  // at the back-edge writes, codegen/host/asmjit), the peeled loop's PHIs
  // start from peeled values instead: a snapshot at snapshot 0's place
  // names, for each such slot, the PHI's new first operand.
  bool add_header_snapshot(TraceIR& out, IRRef new_loop) const {
    if (ir_.snapshots().empty()) return false;
    Snapshot h = ir_.snapshots()[0];
    h.entries.clear();
    for (IRRef p : phis_) {
      const IRIns& entry = ir_[ir_[p].op1];
      if (entry.op != IROp::SLOAD || entry.op2 != kSloadEntry) return false;
      h.entries.push_back(SnapshotEntry{entry.op1, peeled_[ir_[p].op2]});
    }
    std::sort(h.entries.begin(), h.entries.end(),
              [](const SnapshotEntry& x, const SnapshotEntry& y) { return x.slot < y.slot; });
    h.ir_ref = new_loop;
    h.exit_count = 0;
    out.snapshots().push_back(std::move(h));
    return true;
  }

  const TraceIR& ir_;
  const size_t n_;
  const IRRef loop_;
  std::vector<IRRef> body_, phis_;
  std::vector<bool> used_before_, used_in_body_;
  std::vector<IRRef> pre_, peeled_, body_ref_, carried_;
};

}  // namespace

bool LoopPeelPass::run(TraceIR& ir) {
  if (where_it_pays_) {
    if (LoopPredicatePass::applies(ir)) return false;
    if (ir.loop_trip_hint() >= 0 && ir.loop_trip_hint() < kMinLoopTripHint) return false;
  }
  TraceIR out;
  if (!Peeler(ir).peel(out)) return false;
  // At least a tenth less: the peeled copy doubles the trace's code.
  if (where_it_pays_ && body_work(cleaned(out)) * 10 > body_work(cleaned(ir)) * 9) return false;
  ir = std::move(out);
  return true;
}

}  // namespace tessera::jit
