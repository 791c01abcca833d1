// Snapshots: what a guard needs to rebuild the interpreter state when it
// fails (PyPy's resume data, LuaJIT's SnapShot).
//
// A snapshot lists, for every slot the trace has written since it started
// (sparse, as in LuaJIT: unmodified slots still hold the right value in the
// interpreter's registers), the IR reference whose value belongs there, plus
// the frames of inlined calls and the bytecode position to resume at. Slots
// the interpreter will not read before writing them, resuming there, are
// left out (tracer/register_liveness.h), except in snapshots with frames.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera {
struct FunctionProto;
}

namespace tessera::jit {

using IRRefT = uint32_t;  // same as IRRef (trace_ir.h), which includes this header

// Slots are numbered from register 0 of the trace's base frame: inlined
// frames' registers lie above it in the same register stack, so one number
// names any slot of any frame.
struct SnapshotEntry {
  uint32_t slot;  // absolute slot (base frame register 0 = slot 0)
  IRRefT ref;     // the IR value to write back (a constant or an instruction)
};

// An inlined call frame that the exit must push back onto the interpreter's
// frame stack: it runs `proto`, its register 0 is at `base` (relative to the
// trace's base frame), and the caller resumes after the CALL at `call_pc`.
struct SnapshotFrame {
  FunctionProto* proto;
  uint32_t base;
  uint32_t call_pc;  // bytecode index of the CALL in the caller
  // The function's name as the text form spells it: lets parse_ir round-trip
  // a frame when no resolver maps the name back to a proto (proto stays null).
  std::string name = {};
};

struct Snapshot {
  uint32_t ir_ref = 0;   // first IR instruction the snapshot is valid for
  uint32_t pc = 0;       // bytecode index to resume at, in the innermost frame
  std::vector<SnapshotFrame> frames;    // inlined frames, outermost first
  std::vector<SnapshotEntry> entries;   // sorted by slot
  uint32_t exit_count = 0;              // how often this exit was taken
  // The function of the base frame when it is not the trace's own: after a
  // trace has returned from its base frame (FPOP) or pushed a new one
  // (FPUSH), slots count from the new base frame's register 0. Null: the
  // trace's function. `base_name` spells it in the text form.
  FunctionProto* base_proto = nullptr;
  std::string base_name = {};
};

// The CALL in the base frame that an FPUSH with snapshot `s` stands for (its
// caller resumes after it): the snapshot resumes at that CALL, or, where the
// FPUSH makes an inlined frame real, inside the frames it lists, the
// outermost of which that CALL made.
inline uint32_t fpush_call_pc(const Snapshot& s) {
  return s.frames.empty() ? s.pc : s.frames.front().call_pc;
}

}  // namespace tessera::jit
