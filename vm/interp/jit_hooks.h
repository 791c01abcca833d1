// JitHooks: the upward interface through which the interpreter reports hot
// code. The interpreter (T0) declares it; the JIT runtime (a higher layer)
// implements and installs it. With no hooks installed the counters still run
// (they cost one decrement and a branch) and simply wrap.
#pragma once

#include <cstdint>

namespace tessera {

struct FunctionProto;

class JitHooks {
 public:
  virtual ~JitHooks() = default;
  // A loop back-edge at instruction index `pc` of `fn` reached its hot count.
  virtual void on_hot_loop(FunctionProto& fn, uint32_t pc) = 0;
  // `fn`'s entry counter reached its hot count.
  virtual void on_hot_function(FunctionProto& fn) = 0;
};

}  // namespace tessera
