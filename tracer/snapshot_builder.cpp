#include "tracer/snapshot_builder.h"

#include <algorithm>

#include "tracer/ir_operands.h"
#include "tracer/register_liveness.h"

namespace tessera::jit {

void SnapshotBuilder::start(TraceIR& ir, uint32_t start_pc, std::vector<SnapshotFrame> inlined) {
  Snapshot s0;
  s0.pc = start_pc;
  s0.frames = std::move(inlined);
  ir.snapshots().push_back(std::move(s0));
  modified_.emplace_back();
}

uint16_t SnapshotBuilder::take(TraceIR& ir, uint32_t pc, FunctionProto* base,
                               std::vector<SnapshotFrame> inlined, const SlotState& slots,
                               uint32_t epoch) {
  Snapshot s;
  s.ir_ref = static_cast<uint32_t>(ir.size());
  s.pc = pc;
  s.base_proto = base;
  s.frames = std::move(inlined);
  for (uint32_t abs = 0; abs < slots.values.size(); ++abs)
    if (slots.dirty[abs] && slots.values[abs] != kNoRef) s.entries.push_back(SnapshotEntry{abs, slots.values[abs]});
  auto& snaps = ir.snapshots();
  // Consecutive guards with nothing changed in between share a snapshot
  // (not across a base frame switch: the same slots are other registers).
  if (snaps.size() > 1 && epoch_ == epoch && modified_.back() == slots.modified) {
    const Snapshot& last = snaps.back();
    if (last.pc == s.pc && last.base_proto == s.base_proto && last.frames.size() == s.frames.size() &&
        last.entries.size() == s.entries.size() &&
        std::equal(last.entries.begin(), last.entries.end(), s.entries.begin(),
                   [](const SnapshotEntry& a, const SnapshotEntry& b) {
                     return a.slot == b.slot && a.ref == b.ref;
                   }))
      return static_cast<uint16_t>(snaps.size() - 1);
  }
  snaps.push_back(std::move(s));
  modified_.push_back(slots.modified);
  epoch_ = epoch;
  return static_cast<uint16_t>(snaps.size() - 1);
}

void SnapshotBuilder::finish(const TraceIR& recorded, TraceIR& out, const Closing& c) const {
  const auto& old = recorded.instructions();
  auto renumber = [&](IRRef a) { return c.remap[a]; };
  for (size_t k = 0; k < recorded.snapshots().size(); ++k) {
    Snapshot s = recorded.snapshots()[k];
    // Loop-carried slots the iteration had not changed yet hold the PHI's
    // value (its first operand, the entry SLOAD, before renumbering).
    if (k > 0) {
      for (uint32_t abs = 0; abs < c.carried.size(); ++abs) {
        if (!c.carried[abs] || (k < modified_.size() && abs < modified_[k].size() && modified_[k][abs]))
          continue;
        auto at = std::lower_bound(s.entries.begin(), s.entries.end(), abs,
                                   [](const SnapshotEntry& e, uint32_t slot) { return e.slot < slot; });
        if (at == s.entries.end() || at->slot != abs) s.entries.insert(at, SnapshotEntry{abs, c.entry_loads[abs]});
      }
    }
    renumber_snapshot_entries(s, renumber);
    // Registers the interpreter does not read before writing them when it
    // resumes here keep whatever they hold: the exit does not write them
    // (register_liveness.h). Snapshots with inlined frames keep everything.
    if (s.frames.empty()) {
      const FunctionProto& fn = s.base_proto ? *s.base_proto : c.root;
      std::erase_if(s.entries, [&](const SnapshotEntry& e) { return !register_live_at(fn, s.pc, e.slot); });
    }
    // ir= names the first instruction the snapshot is valid for: the first
    // one recorded after it that stays in place (constants and entry SLOADs
    // moved to the front; clamp_snapshot_starts below pulls the snapshot up
    // to an entry SLOAD that exits through it), or the end of the body.
    IRRef at = s.ir_ref;
    while (at < old.size() && moved_to_front(old[at])) ++at;
    s.ir_ref = at < old.size() ? c.remap[at] : c.body_end;
    out.snapshots().push_back(std::move(s));
  }
  // The entry SLOADs moved to the preamble exit through snapshot 0, which
  // may have been taken at a later instruction: it is valid from them on.
  clamp_snapshot_starts(out);
}

}  // namespace tessera::jit
