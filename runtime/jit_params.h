// JitParams: the tunable thresholds and limits of the JIT, one field per row
// of jit_params.def, plus the on/off switch. A plain value: each VM's runtime
// holds its own copy (no global mutable state), set from the command line
// (`--jit-param NAME=VALUE`) or, later, the embedding API.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {

struct JitParams {
#define JIT_PARAM(name, def, lo, hi, desc) int64_t name = def;
#include "runtime/jit_params.def"
#undef JIT_PARAM

  // false = `--jit=off`: the interpreter runs alone, no hooks are installed.
  bool enabled = true;

  // Sets one parameter from "NAME=VALUE" (VALUE a decimal integer within the
  // parameter's range). On any error the parameters are left unchanged and
  // std::invalid_argument is thrown with a message fit for a usage error.
  void set(std::string_view name_eq_value);

  // (name, current value) for every parameter, in table order.
  std::vector<std::pair<std::string, int64_t>> list() const;

  // A header line, then one line per parameter: name, default, range, meaning;
  // for --help and documentation.
  static std::string describe_all();

  // Comma-separated parameter names, in table order ("hotloop, hotcall, ...").
  static std::string known_names();
};

}  // namespace tessera
