// Runs a script in a fresh VM, with or without a HotspotObserver installed, and
// captures what it printed.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>

#include "runtime/hotspot_observer.h"
#include "vm/interp/vm.h"

namespace tessera::testing {

struct Outcome {
  RunStatus status;
  std::string out;
  std::string err;
};

// Runs `source` as t.tsb. `rt` (if any) is installed as the JIT hooks; with
// `tracing` it also records and compiles traces.
inline Outcome run_script(const std::string& source, HotspotObserver* rt, bool tracing) {
  std::ostringstream out, err;
  VMOptions opts;
  opts.out = &out;
  opts.err = &err;
  VM vm(opts);
  if (rt) {
    if (tracing) {
      rt->set_script_name("t.tsb");
      rt->enable_tracing(vm);
    }
    vm.set_jit_hooks(rt);
  }
  RunStatus st = vm.run_source("t.tsb", source);
  return {st, out.str(), err.str()};
}

// Runs `source` with the interpreter alone and with a trace compiler built
// from `params`, and expects the same status, stdout and stderr (GoogleTest
// checks). Returns the JIT run's runtime for further checks.
inline std::unique_ptr<HotspotObserver> expect_same_as_interpreter(const std::string& source, const JitParams& params) {
  Outcome ref = run_script(source, nullptr, true);
  auto rt = std::make_unique<HotspotObserver>(params);
  Outcome jit = run_script(source, rt.get(), true);
  EXPECT_EQ(jit.status, ref.status);
  EXPECT_EQ(jit.out, ref.out);
  EXPECT_EQ(jit.err, ref.err);
  return rt;
}

// expect_same_as_interpreter with compiles done before the program goes on
// (async=0) and one host tier (`tier`: "1" or "2").
inline std::unique_ptr<HotspotObserver> expect_same_in_tier(const std::string& source, const char* tier) {
  JitParams p;
  p.set("async=0");
  p.set(std::string("tier=") + tier);
  return expect_same_as_interpreter(source, p);
}

// Whether trace `t` contains an instruction with opcode `op`.
inline bool trace_has_op(const jit::Trace& t, jit::IROp op) {
  const auto& ins = t.ir.instructions();
  return std::any_of(ins.begin(), ins.end(), [&](const jit::IRIns& i) { return i.op == op; });
}

// Whether some trace of `rt` contains an instruction with opcode `op`.
inline bool any_trace_has_op(const HotspotObserver& rt, jit::IROp op) {
  const auto& ts = rt.tracing()->traces();
  return std::any_of(ts.begin(), ts.end(), [&](const auto& t) { return trace_has_op(*t, op); });
}

// Exits taken back to the interpreter, over all traces of `rt`.
inline uint64_t total_exits(const HotspotObserver& rt) { return rt.tracing()->exits_taken(); }

// Exits taken back to the interpreter from side traces only.
inline uint64_t side_trace_exits(const HotspotObserver& rt) {
  uint64_t n = 0;
  for (const auto& t : rt.tracing()->traces())
    if (t->is_side)
      for (uint64_t e : t->exits) n += e;
  return n;
}

// Times compiled code was entered from the interpreter, over all traces.
inline uint64_t total_entries(const HotspotObserver& rt) {
  uint64_t n = 0;
  for (const auto& t : rt.tracing()->traces()) n += t->entries;
  return n;
}

}  // namespace tessera::testing
