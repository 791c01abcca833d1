// The fusion pass's IR-in / IR-out tests (fusion_test.cpp, fusion_kinds_test.cpp):
// the pass on a trace's text, with register liveness from the script's
// bytecode as in the JIT, and the regions of the kernel calls it made.
#pragma once

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "optimizer/fusion.h"
#include "tests/optimizer/pass_test_support.h"
#include "vm/builtins/builtin.h"
#include "vm/bytecode/compiler.h"
#include "vm/frontend/parser.h"

namespace tessera::jit {

// The pass on `text`, with the main function of `source` for register liveness.
inline std::string fuse(const std::string& text, const char* source) {
  CompileOptions opts;  // as the VM compiles scripts
  opts.is_builtin = [](std::string_view name) { return is_builtin_global(name); };
  std::unique_ptr<Module> m = compile(parse("fz.tsb", source), opts);
  TraceIR ir = parse_ir(text);
  ir.set_function(m->functions.front().get());
  FusionPass pass;
  pass.run(ir);
  verify_ir(ir, "after fuse");
  std::string out = print_ir(ir);
  if (print_ir(parse_ir(out)) != out) return "ROUND TRIP FAILED\n" + out;
  return out;
}

// The kernel calls' regions in printed IR, each as its lines joined by "; ".
inline std::vector<std::string> regions(const std::string& ir) {
  std::vector<std::string> out;
  std::istringstream in(ir);
  std::string line;
  bool in_region = false;
  while (std::getline(in, line)) {
    if (line.rfind("CALL #", 0) == 0 && line.find(" kernel 0 kernel ") != std::string::npos) {
      out.emplace_back();
      in_region = true;
    } else if (in_region && line.rfind("  | ", 0) == 0) {
      out.back() += (out.back().empty() ? "" : "; ") + line.substr(4);
    } else {
      in_region = false;
    }
  }
  return out;
}

}  // namespace tessera::jit
