// Trace: what the runtime keeps of one recorded trace, from recording to
// the code installed now: its IR, where it is entered, its code per tier,
// its exit counters and exit links, and its state (pending, upgraded, dead).
#pragma once

#include <array>
#include <map>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/host/trace_abi.h"
#include "deopt/exit_plan.h"
#include "deopt/exit_policy.h"
#include "runtime/trace_provenance.h"
#include "tracer/trace_ir.h"
#include "vm/bytecode/bytecode.h"

namespace tessera::jit {

struct Trace {
  enum class Kind : uint8_t {
    Loop,      // root trace of a loop, entered at its patched back-edge
    Function,  // root trace of a function, entered when it is called
    Side,      // hangs off an exit of another trace
  };
  uint32_t id;
  Kind kind = Kind::Loop;
  FunctionProto* proto;  // valid while its module runs; reports use the copies below
  std::string function;  // the function the trace starts in
  std::string file;      // the source it comes from (FunctionProto::file; empty: the run's script)
  int line = 0;          // source line of the loop's back-edge (function: of `fn`)
  std::optional<uint32_t> loop_pc;  // loop traces: the back-edge instruction that enters it
  uint32_t start_pc;  // first bytecode it runs
  TraceIR ir;                // as compiled (after the optimizer)
  uint32_t recorded_size = 0;  // IR instructions as recorded
  // --dump only: the IR as recorded and after each optimizer pass, and as
  // compiled (printed when the interpreter ends: the IR names functions and
  // constants its module owns, which go with it).
  std::vector<std::pair<std::string, std::string>> pass_ir;
  std::string compiled_ir;
  // Made with compiled_ir (trace_provenance.h): each IR instruction's line
  // and bytecode, and the locals each snapshot restores.
  std::vector<IrProvenance> provenance;
  std::vector<std::map<uint32_t, std::string>> snapshot_names;
  TraceFn fn = nullptr;        // C++ enters here
  // The exit plans of the code installed now (CompiledTrace::exit_plans).
  const std::vector<ExitPlan>* exit_plans = nullptr;
  NativeTrace native = nullptr;  // linked exits jump here
  // Its entry with passed values in registers (CompiledTrace::native_passed),
  // which its parent's exit jumps to; null when it takes none.
  NativeTrace native_passed = nullptr;
  // The tier of the code installed now (1: asmjit, 2: LLVM; 0: none yet),
  // and per tier (index tier-1): the code as text for --dump, its size and
  // its compile time.
  uint8_t tier = 0;
  std::array<std::string, 2> code_text;
  std::string code_object;  // --dump: T2's object file
  std::string code_disassembly;  // --dump: T2's machine code, mapped to the IR
  std::array<size_t, 2> code_size{};
  std::array<double, 2> tier_compile_ms{};
  // tier=auto: T1 code counts iterations down here (LoweringEnv); at zero
  // it leaves through the tier-up exit. The T2 recompilation's state:
  enum class Upgrade : uint8_t { None, Queued, Done, Failed };
  Upgrade upgrade = Upgrade::None;
  uint32_t tier_up_counter = 0;
  uint32_t tier_up_interval = 0;  // what the counter restarts from (doubles while LLVM works)
  double record_ms = 0, compile_ms = 0;
  uint64_t entries = 0;
  // Runs that ended at the function's own RET (a snapshot in `returns`):
  // the call's end, which the interpreter (or the host) completes; no exit.
  uint64_t returns_taken = 0;
  // Time in compiled code from entries into this trace (through links, to
  // whichever exit came back), measured only for --dump and --metrics.
  double native_ms = 0;
  ExitCounters exits;  // per snapshot: exits taken, failed side-trace tries
  // The native code's exit links (trace_abi.h ExitLinking), one per snapshot:
  // an attached side trace, or for a side trace's final EXIT the trace it
  // links to. Exits whose slot is set never come back to the runtime.
  std::unique_ptr<NativeTrace[]> links;
  // Per snapshot: the side trace's entry that takes the exit's passed values
  // (ExitLinking::passed_links); null with jit param passregs=0.
  std::unique_ptr<NativeTrace[]> passed_links;
  // ExitLinking::passed_exits of its T2 upgrade: the exits whose side trace
  // takes passed values when the upgrade was asked for.
  std::vector<uint8_t> upgrade_passed_exits;
  // Side traces: the root trace they belong to and the exit they hang off.
  // Any trace that ends in a linked EXIT: the trace it links to.
  bool is_side = false;
  // A side trace that is a peer of its parent loop trace: a loop of its own
  // for other entry types, hanging off the parent's entry exit (snapshot 0;
  // tracer/recorder.h set_peer).
  bool peer = false;
  uint32_t root = 0, parent = 0, parent_snap = 0;
  int32_t link = -1;
  uint16_t link_snap = 0;
  uint32_t sides = 0;  // root traces: side traces attached so far
  // Exits linked to a side trace recorded from another exit that resumes
  // alike (TraceRegistry::side_trace_to_share): snapshot, trace id.
  std::vector<std::pair<uint32_t, uint32_t>> shared_exits;
  std::vector<int> exit_lines;  // source line each snapshot resumes at
  // Snapshots that resume at a RET or RETNIL of the trace's own base frame
  // (no inlined frames): the function's return, which ends the run like
  // LuaJIT's return link, not a deopt: not counted as an exit and never the
  // start of a side trace (one would record the callers, one per call site,
  // a chain of side traces hung off one RET). Entered from a host's call
  // (Interpreter::call), the runtime returns to the host itself.
  // Per snapshot: the RET's pc at such a snapshot, kNotReturn at the others
  // (the pc itself: run_trace reads it on every return).
  static constexpr uint32_t kNotReturn = UINT32_MAX;
  std::vector<uint32_t> returns;
  bool returns_at(size_t snap) const { return snap < returns.size() && returns[snap] != kNotReturn; }
  int exit_line(size_t snap) const { return snap < exit_lines.size() ? exit_lines[snap] : 0; }
  uint32_t max_slot = 0;
  // Invalidated (a global it assumed constant was stored into), or its
  // compilation failed: nothing enters it or links to it.
  bool dead = false;
  // Recorded, waiting for its native code (async compilation).
  bool pending = false;
};

// The side trace attached at exit `snap` of trace `parent` (the last one
// recorded there), or null: what the trace tree and the viewer draw.
inline const Trace* side_trace_at(const std::vector<std::unique_ptr<Trace>>& traces, uint32_t parent, size_t snap) {
  const Trace* side = nullptr;
  for (const auto& o : traces)
    if (o->is_side && o->parent == parent && o->parent_snap == snap) side = o.get();
  return side;
}

// The source line of instruction `pc` of `p` (the function's line past its code).
inline int source_line(const FunctionProto& p, uint32_t pc) { return pc < p.lines.size() ? p.lines[pc] : p.line; }

}  // namespace tessera::jit
