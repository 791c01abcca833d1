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

// Slot -> constant (a KINT int, KBOOL or KOBJ string of `ir`) the register
// holds at exit `snap`, where the trace knows it: the snapshot's constant
// entries, and constants stored (SSTORE; in a loop trace, by the body)
// before the first instruction that exits there and not overwritten since.
// A side trace uses such a register as the constant behind one guard
// (`c == " "` after the parent's LOADK of " " compares bytes, not through a
// helper), as LuaJIT's side traces inherit their parent's constants. Same
// cases of emptiness as above.
std::unordered_map<uint32_t, IRRef> exit_slot_constants(const TraceIR& ir, uint16_t snap);

// Whether `a` of `x` and `b` of `y` are the same constant value.
bool same_constant(const TraceIR& x, IRRef a, const TraceIR& y, IRRef b);

}  // namespace tessera::jit
