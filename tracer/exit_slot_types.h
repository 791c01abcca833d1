// What a trace has proven about the registers at one of its exits: the type
// each one holds there. A side trace recorded from that exit loads those
// registers without guarding their type again (SLOAD op2 = 2), as LuaJIT's
// side traces inherit their parent's slots and PyPy's bridges the parent's
// resume data.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "tracer/trace_ir.h"

namespace tessera::jit {

// Slot -> type at exit `snap` of `ir` (slots of the snapshot's base frame).
// Known: the snapshot's own entries (the exit writes them), and before the
// first instruction that may exit through `snap`: slots loaded with a type
// (every SLOAD guards or inherits its type), stored (SSTORE) or given a
// helper's checked result; a frame push or pop forgets everything (other
// registers). In a loop trace what the body proved before the exit holds in
// every iteration: a slot's type at the end of an iteration is its type on
// entry (the recorder aborts type-unstable loops). Empty for snapshots with
// inlined frames and for snapshots no instruction uses.
std::unordered_map<uint32_t, IRType> exit_slot_types(const TraceIR& ir, uint16_t snap);

}  // namespace tessera::jit
