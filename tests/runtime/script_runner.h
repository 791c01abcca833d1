// Runs a script in a fresh VM, with or without a JitRuntime installed, and
// captures what it printed.
#pragma once

#include <sstream>
#include <string>

#include "runtime/jit_runtime.h"
#include "vm/interp/vm.h"

namespace tessera::testing {

struct Outcome {
  RunStatus status;
  std::string out;
  std::string err;
};

// Runs `source` as t.tsb. `rt` (if any) is installed as the JIT hooks; with
// `tracing` it also records and compiles traces.
inline Outcome run_script(const std::string& source, JitRuntime* rt, bool tracing) {
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

}  // namespace tessera::testing
