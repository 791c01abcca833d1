// Shared by the allocation sinking tests (lists and tensors) of the JIT in
// a runtime: hot thresholds that trace and link quickly, and a count of the
// exits taken that built a sunk object.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/hotspot_observer.h"

namespace tessera::testing {

// Synchronous compiles, low thresholds, tier `tier` (1, 2 or auto) with an
// early upgrade under auto.
inline JitParams sink_test_params(const std::string& tier) {
  JitParams p;
  p.set("async=0");
  p.set("hotloop=3");
  p.set("hotexit=2");
  p.set("tier=" + tier);
  p.set("tier2=4");
  return p;
}

// Exits taken whose snapshot names a sunk allocation `op` (VNEWLIST,
// VNEWTENSOR): each built the object there.
inline uint64_t materializing_exits(const HotspotObserver& rt, jit::IROp op) {
  uint64_t n = 0;
  for (const auto& t : rt.tracing()->traces())
    for (size_t k = 0; k < t->ir.snapshots().size(); ++k)
      for (const jit::SnapshotEntry& e : t->ir.snapshots()[k].entries)
        if (t->ir[e.ref].op == op) {
          n += t->exits[k];
          break;
        }
  return n;
}

}  // namespace tessera::testing
