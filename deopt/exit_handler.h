// Exit handling: when a compiled trace leaves through a snapshot, write the
// snapshot's values back into the interpreter's registers (with reference
// counting) and say where the interpreter resumes, including the frames of
// calls the trace had inlined.
#pragma once

#include <cstdint>
#include <vector>

#include "tracer/trace_ir.h"
#include "vm/core/value.h"

namespace tessera::jit {

// The Value an IR value of type `t` with raw 64-bit `payload` stands for
// (objects are borrowed: the result holds a new reference).
Value value_from_payload(IRType t, uint64_t payload);

// Writes `snap`'s entries, whose raw values the trace left in `vals` (one per
// entry, in order), into the registers at `base` (slot 0 = base[0]).
void restore_snapshot(const TraceIR& ir, const Snapshot& snap, const uint64_t* vals, Value* base);

// Where each frame resumes after an exit through `snap`: the root frame's pc
// first, then each inlined frame's (frames listed in snap.frames).
std::vector<uint32_t> resume_pcs(const Snapshot& snap);

}  // namespace tessera::jit
