// RootKey: where a root recording starts, as an explicit kind rather than a
// reserved pc: the back-edge of a loop (its pc) or the entry of a function.
// Blacklisting and the "is one already compiling?" check are keyed by it.
#pragma once

#include <cstdint>
#include <optional>

#include "vm/bytecode/bytecode.h"

namespace tessera::jit {

struct RootKey {
  FunctionProto* proto = nullptr;
  std::optional<uint32_t> loop_pc;  // the loop's back-edge; none: the function's entry

  static RootKey loop(FunctionProto* proto, uint32_t pc) { return RootKey{proto, pc}; }
  static RootKey function(FunctionProto* proto) { return RootKey{proto, std::nullopt}; }
  bool is_function() const { return !loop_pc.has_value(); }
  bool operator==(const RootKey&) const = default;
};

}  // namespace tessera::jit
