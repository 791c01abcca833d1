#include "tracer/register_liveness.h"

#include <vector>

#include "vm/core/value.h"

namespace tessera::jit {

namespace {

// What instruction `in` reads, with what the opcode table leaves open
// resolved from the function: CALLKW's srcUp role (every register from A
// up) is its callee, its B arguments and one keyword value per name in
// K[C], which the interpreter reads (vm/interp/dispatch.cpp).
bool reads(const FunctionProto& proto, const Instr& in, uint32_t reg) {
  if (in.op == Op::CALLKW && in.c < proto.consts.size() && proto.consts[in.c].is_list()) {
    const size_t names = proto.consts[in.c].as_list()->items.size();
    return reg >= in.a && reg <= in.a + in.b + names;
  }
  return reads_register(in, reg);
}

}  // namespace

bool register_live_at(const FunctionProto& proto, uint32_t pc, uint32_t reg) {
  const auto& code = proto.code;
  if (reg >= static_cast<uint32_t>(proto.nregs) || pc >= code.size()) return true;
  constexpr size_t kBudget = 1024;  // instructions visited before giving up (live)
  std::vector<bool> seen(code.size(), false);
  std::vector<uint32_t> work{pc};
  size_t visited = 0;
  while (!work.empty()) {
    uint32_t at = work.back();
    work.pop_back();
    for (;;) {
      if (at >= code.size()) return true;  // runs off the code: be safe
      if (seen[at]) break;                  // this path's rest is covered
      seen[at] = true;
      if (++visited > kBudget) return true;
      const Instr& in = code[at];
      if (reads(proto, in, reg)) return true;
      if (writes_register(in, reg)) break;  // written first: dead on this path
      const OpFlow flow = op_info(in.op).flow;
      if (flow == OpFlow::ret) break;
      if (flow == OpFlow::cmp) work.push_back(at + 2);  // the test holds: past the JMP
      const int64_t target = static_cast<int64_t>(at) + 1 + in.sbx;
      if (flow == OpFlow::jump || flow == OpFlow::branch) {
        if (target < 0) return true;
        if (flow == OpFlow::jump) {
          at = static_cast<uint32_t>(target);
          continue;
        }
        work.push_back(static_cast<uint32_t>(target));
      }
      ++at;
    }
  }
  return false;
}

}  // namespace tessera::jit
