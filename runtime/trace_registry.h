// TraceRegistry: the traces of one VM and how they are wired into the
// running program. It answers which traces exist (by id, and whether a root
// or a side trace is still compiling); wires an installed trace in (a
// patched loop back-edge, a function's entry trace, the exit link of its
// parent, its own final link); rewires links when a trace's code changes;
// and unwires traces that are invalidated because a global they assumed
// constant was stored into. It also tracks what the installed code needs
// from whoever runs it: register stack room and the exit-value buffer.
//
// Exits leave native code with an exit code that names the trace and the
// snapshot (trace id << 16 | snapshot, trace_abi.h ExitLinking); the
// registry makes and reads that encoding, so it also decides which traces
// fit it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "codegen/host/compiled_trace.h"
#include "runtime/trace.h"
#include "tracer/root_key.h"

namespace tessera::jit {

class TraceRegistry {
 public:
  // Which traces exist. Ids are indexes, given in the order traces are added.
  uint32_t next_id() const { return static_cast<uint32_t>(traces_.size()); }
  Trace& add(std::unique_ptr<Trace> t);
  size_t size() const { return traces_.size(); }
  Trace& operator[](uint32_t id) { return *traces_[id]; }
  const std::vector<std::unique_ptr<Trace>>& all() const { return traces_; }
  // Whether some trace waits for its code, or one from `root`, or a side
  // trace of exit `snap` of trace `parent` (async compilation).
  bool any_pending() const;
  bool pending_root(const RootKey& root) const;
  bool pending_side(uint32_t parent, uint32_t snap) const;

  // The exit code: whether `t` can be encoded (its id and every snapshot),
  // the linking its code is compiled with, and which trace and snapshot an
  // exit code names.
  static bool fits_exit_code(const Trace& t);
  static ExitLinking exit_linking(Trace& t);
  struct Exit {
    Trace& trace;
    uint32_t snap;  // or kTierUpExit
  };
  Exit exit_of(uint32_t code) { return Exit{*traces_[code >> 16], code & 0xFFFF}; }

  // Sizes `t`'s per-snapshot tables (exit counters, links, resume lines)
  // for the snapshots it has now, and grows the register room traces need.
  void size_exit_tables(Trace& t);
  // Whether exits pass values to their side traces in registers (jit param
  // passregs; trace_abi.h): traces sized from now on get a passed_links
  // table, and their exits the branch that reads it.
  void set_pass_registers(bool on) { pass_registers_ = on; }
  // Registers above a trace's base that any trace may touch. Traces run
  // into one another through links, and recursion moves the base frame, so
  // there is one need for all (the interpreter guarantees it at every entry).
  uint32_t stack_need() const { return stack_need_; }
  // A cell that size_exit_tables raises to stack_need() (JitHooks::trace_stack_need).
  void report_stack_need_to(uint32_t& cell) { stack_need_out_ = &cell; }
  // exit_vals of the exit that returns to the runtime: room for the largest
  // exit of any code installed so far.
  uint64_t* exit_buffer() { return exit_buffer_.data(); }
  // Makes `code` (of tier 1 or 2) the code that runs `t`.
  void set_code(Trace& t, const CompiledTrace& code, int tier);

  // The interpreter's globals and their watch bytes (JitHooks::watch_globals):
  // a set byte makes a store into the global call invalidate_global.
  void watch_globals(uint8_t* watch, const Value* globals, size_t n);
  void forget_globals();  // the interpreter is going away
  const uint8_t* global_watch() const { return global_watch_; }
  // Whether `t`, compiled in the background, is out of date: invalidated,
  // its parent or link target invalidated, or a global it assumed changed
  // (its watch bytes were not set while it compiled).
  bool stale(const Trace& t) const;

  // Wires installed trace `t` in, so that the program enters it: its own
  // final link, its parent's exit (side traces), the function's entry
  // (function traces) or the loop's back-edge (loop traces); and watches
  // the globals it assumes.
  void link(Trace& t);
  // A side trace that exit `snap` of `parent` can link to instead of having
  // its own recorded: an installed one that starts where the exit resumes
  // (function, pc, inlined frames) and whose unguarded register loads
  // (types its own parent proved) have the types `proven` (exit_slot_types
  // of this exit) says, and whose registers taken as its parent's constants
  // hold the same constants at this exit (exit_slot_constants). Recursive
  // descent and tree walks reach the same return point from many traces;
  // without this each recorded its own copy of the same code. Null: none.
  Trace* side_trace_to_share(const Trace& parent, uint32_t snap,
                             const std::unordered_map<uint32_t, IRType>& proven) const;
  // Links exit `snap` of `parent` to `side` (side_trace_to_share's).
  static void share(Trace& parent, uint32_t snap, Trace& side);
  // Every exit link to `from` goes to `to` (null: back to the runtime), in
  // both tables (links and passed_links; a trace's two entry points are
  // distinct code). Null `from`: nothing.
  void retarget(NativeTrace from, NativeTrace to);
  // `t` never runs: nothing enters it or links to it.
  static void drop(Trace& t) {
    t.dead = true;
    t.pending = false;
  }
  // A store into global `index`: invalidates the traces that assumed it;
  // returns how many.
  uint32_t invalidate_global(uint32_t index);

 private:
  // Unwires `t`: a loop's back-edge counts again, a function's calls go to
  // the interpreter, links to it are cleared.
  void invalidate(Trace& t);

  std::vector<std::unique_ptr<Trace>> traces_;
  uint32_t stack_need_ = 0;
  uint32_t* stack_need_out_ = nullptr;
  bool pass_registers_ = true;
  std::vector<uint64_t> exit_buffer_;
  uint8_t* global_watch_ = nullptr;
  const Value* globals_ = nullptr;
  size_t num_globals_ = 0;
};

}  // namespace tessera::jit
