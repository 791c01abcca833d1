// make_lowering_env: what both host tiers know about a trace besides its IR.
#include "codegen/host/lowering_env.h"

namespace tessera::jit {

LoweringEnv make_lowering_env(const TraceIR& ir, const ObjectLayout& layout, CodeData& data,
                              const ExitLinking& linking, const FunctionProto* proto, const uint8_t* global_watch) {
  LoweringEnv env;
  env.list = layout.list;
  env.tensor = layout.tensor;
  env.str = layout.str;
  env.obj_refcount_offset = layout.refcount_offset;
  env.linking = linking;
  env.proto = proto;
  env.global_watch = global_watch;
  for (const CallTarget& t : ir.calls()) {
    data.call_targets.push_back(t);
    env.calls.push_back(&data.call_targets.back());
  }
  data.exit_plans.push_back(plan_exits(ir));
  env.exit_plans = &data.exit_plans.back();
  return env;
}

}  // namespace tessera::jit
