// What both host tiers know of the interpreter's slot tags at a trace's
// loop header, computed once from the IR. A slot whose tag is known to be
// a scalar's is stored without reference counting (SSTORE), and a frame
// pop skips clearing it.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "tracer/trace_ir.h"

namespace tessera::jit {

// Base-frame slot -> the Value tag (vm/core/value.h Tag) it holds, where known.
using SlotTags = std::unordered_map<uint32_t, uint8_t>;

// How instruction `in` changes what is known of the slot tags: an SLOAD
// or SSTORE sets its slot's (a passed value's slot holds a tag not known:
// Undef), a CALL's result slot is forgotten, a frame push or pop forgets all.
void update_slot_tags(SlotTags& tags, const TraceIR& ir, const IRIns& in);

// The slot tags known at the LOOP of `ir`: those known when the code
// before it has run (update_slot_tags over it) that no iteration changes
// (a store of another type, a helper's result slot, a frame switch). Empty
// when `ir` has no LOOP. References out of range and value-less stored
// operands (malformed IR) change nothing here: the instruction's own
// lowering reports them.
SlotTags loop_header_slot_tags(const TraceIR& ir);

}  // namespace tessera::jit
