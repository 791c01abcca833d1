// How the fused calls' kernels are named and measured in reports: the
// events' fields and the spans the kernel runtime (runtime/kernels/) gives
// the event log (--jit-log, events.jsonl, the timeline:
// runtime/jit_event_log.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "codegen/kernel/kernel_disk_cache.h"
#include "vm/graph/op_table.h"
#include "vm/graph/region.h"

namespace tessera::kir {

// How reports name a fused region: "k" and 12 hex digits of its text's hash
// (the trace tree's node, the timeline's and --metrics' kernel), and its
// operations in order ("mul add tanh").
inline std::string region_report_id(const Region& r) { return "k" + KernelDiskCache::hash_hex(r.str()).substr(0, 12); }
inline std::string region_ops_text(const Region& r) {
  std::string ops;
  for (const RegionOp& op : r.ops) ops += (ops.empty() ? "" : " ") + std::string(op_def(op.op).name);
  return ops;
}

// An event's fields, in order: a name and an integer, a number or a text.
using EventValue = std::variant<int64_t, double, std::string>;
using EventFields = std::vector<std::pair<std::string, EventValue>>;

// One fused call's span (or one GPU launch's time on the device), as the
// timeline and --metrics keep it: plain fields, so that a span per call
// costs no allocation (docs/observability.md: a --dump run at most 1.5x).
struct KernelSpan {
  double start_ms = 0, end_ms = 0;  // steady-clock milliseconds (runtime/jit_clock.h's epoch)
  bool gpu = false;                 // which device ran it
  bool on_device = false;           // a GPU launch's time on the device (its own track)
  const char* tier = nullptr;       // a launch's "K2" or "K3"; null: not said
  int64_t ops = -1;                 // the region's operations; -1: not said
  int64_t blocks = -1;              // a launch's thread blocks; -1: not said
  int64_t bytes = 0;                // its tensor inputs and output
  int64_t flops = 0;                // a leading matrix product's, else 0
};


}  // namespace tessera::kir
