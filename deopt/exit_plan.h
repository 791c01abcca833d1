// Exit plans: what leaving a compiled trace through one snapshot does, worked
// out once per snapshot (LuaJIT's lj_snap restore, PyPy's resume.py).
//
// A guard that fails leaves through its snapshot. The plan of that snapshot
// says, in one data structure that both host backends emit and that
// execute_exit_plan runs on the C++ side:
//
//   values    the IR values the exit reads, in buffer order (raw payloads:
//             trace_abi.h); for a snapshot without sunk objects these are its
//             entries' values in entry order;
//   writes    plain register writes: register <- values[i];
//   objects   sunk allocations (VNEWLIST, VNEWTENSOR) to build, each from
//             values and from objects built before it (a sunk list inside a
//             sunk list), stored into every register that names it: one
//             object, however many registers and enclosing objects name it;
//   frames    the inlined frames the interpreter pushes back and where each
//             resumes.
//
// Backends emit a plan without objects inline (reference counts, one test of
// the overwritten registers' tags, plain stores: the hot path of linked
// exits). A plan with objects is executed by one helper call
// (tessera_jit_restore_exit) on a buffer of its values: no register of the
// trace is live across it, so nothing a backend allocated can be clobbered,
// and the order of reference counting is C++'s, not each backend's.
#pragma once

#include <cstdint>
#include <vector>

#include "tracer/trace_ir.h"
#include "vm/core/value.h"

namespace tessera::jit {

// One value an exit reads: the IR value and its type (which says how the raw
// payload becomes a Value).
struct ExitValue {
  IRRef ref = kNoRef;
  IRType type = IRType::None;
};

// An element of an object the exit builds: a value, or an object built
// earlier in the plan.
struct ExitOperand {
  bool object = false;
  uint32_t index = 0;  // into ExitPlan::values or ExitPlan::objects
};

struct ExitObject {
  IRRef ref = kNoRef;  // the VNEWLIST or VNEWTENSOR
  IROp op = IROp::VNEWLIST;
  std::vector<ExitOperand> elements;
  // VNEWTENSOR: {dtype, rank, dim0, ..., dim(rank-1)}.
  std::vector<int64_t> tensor_layout;
  std::vector<uint32_t> slots;  // the registers that name it (may be none: only an element)
};

struct ExitWrite {
  uint32_t slot = 0;
  uint32_t value = 0;  // index into ExitPlan::values
};

// A write whose value a linked exit may pass in a register instead: which
// write, and which passed register (0 .. kPassedInts-1 for ints, then the
// floats).
struct PassedValue {
  uint32_t write = 0;  // index into ExitPlan::writes
  uint8_t reg = 0;
};

// An inlined frame to push back (SnapshotFrame, as the interpreter needs it).
struct ExitFrame {
  FunctionProto* proto = nullptr;
  uint32_t base = 0;
};

struct ExitPlan {
  uint16_t snap = 0;
  std::vector<ExitValue> values;
  std::vector<ExitWrite> writes;    // in snapshot-entry order
  std::vector<ExitObject> objects;  // an object's operands name only earlier objects
  // Registers the inline form writes whose old value may be an object (the
  // release test reads their tags); the others hold a scalar at every exit.
  std::vector<uint32_t> release_checked;
  // Where each frame resumes: the root frame first, then each inlined frame
  // (the last one at the snapshot's pc).
  std::vector<uint32_t> resume_pcs;
  std::vector<ExitFrame> frames;  // inlined frames, outermost first
  // The writes a linked exit may pass in registers: the first int and float
  // entries (not constants: a side trace takes those as constants) of a
  // snapshot in the base frame, without inlined frames and without sunk
  // objects; empty otherwise.
  std::vector<PassedValue> passed;

  bool builds_objects() const { return !objects.empty(); }
};

// Registers that hold a scalar at every exit of `ir`: loaded with a scalar
// type on entry (before any exit but snapshot 0's, which writes nothing) and
// never given an object (a store, a helper's result, an object reload).
// Exits write them without reference counting. Empty for traces that move
// their base frame (FPUSH, FPOP: the same slot number names other registers).
// Indexed by slot; slots past its end hold no scalar. (A bit per slot, not a
// hash set: it is built for every trace compiled.)
std::vector<bool> scalar_slots(const TraceIR& ir);

// The plan of every snapshot of `ir`, indexed by snapshot number. Throws
// std::runtime_error, naming the instruction, on a sunk allocation an exit
// cannot build (a missing virtual tensor, an element count or type that does
// not fit its layout, a cycle).
std::vector<ExitPlan> plan_exits(const TraceIR& ir);

// The plan of an exit that writes `entries` (no sunk objects) and resumes
// where snapshot 0 does: T1's tier-up exit, which writes the loop-carried
// values into the registers their entry SLOADs read (lowering_env.h
// tier_up_counter).
ExitPlan plan_tier_up_exit(const TraceIR& ir, const std::vector<SnapshotEntry>& entries);

// Runs `plan` on the C++ side: `vals` holds the raw payloads of plan.values
// (objects borrowed: each gains a reference), `base` is the trace's base
// frame register 0 as of the exit. Builds the objects, then writes every
// register (releasing what each held). Used by tessera_jit_restore_exit (the
// compiled exits that build objects) and for exits that fill exit_vals.
// Running out of memory while building an object throws std::bad_alloc.
void execute_exit_plan(const ExitPlan& plan, const uint64_t* vals, Value* base);

// The Value an IR value of type `t` with raw 64-bit `payload` stands for
// (objects are borrowed: the result holds a new reference).
Value value_from_payload(IRType t, uint64_t payload);

}  // namespace tessera::jit
