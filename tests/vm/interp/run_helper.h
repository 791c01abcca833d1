// Runs a script in a fresh VM and captures what it printed.
#pragma once

#include <sstream>
#include <string>

#include "vm/interp/vm.h"

namespace tessera::testing {

struct RunResult {
  RunStatus status;
  std::string out;
  std::string err;
};

inline RunResult run_script(const std::string& source, VMOptions opts = {}) {
  std::ostringstream out, err;
  opts.out = &out;
  opts.err = &err;
  VM vm(opts);
  RunStatus st = vm.run_source("t.tsb", source);
  return {st, out.str(), err.str()};
}

}  // namespace tessera::testing
