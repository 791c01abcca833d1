#include "tracer/register_liveness.h"

#include <vector>

namespace tessera::jit {
namespace {

enum class Reads : uint8_t { none, A, B, AB, BC, ABC, A4, AtoAB, Aup, BtoBC1, ABtoBC1, BtoBC, AtoACB };
enum class Writes : uint8_t { none, A };
enum class Flow : uint8_t { next, jump, branch, cmp, ret };

struct Effects {
  bool present = false;
  Reads reads = Reads::none;
  Writes writes = Writes::none;
  Flow flow = Flow::next;
};

struct EffectTable {
  Effects rows[kNumOps];
  EffectTable() {
#define REGFX(op, r, w, f) rows[static_cast<int>(Op::op)] = Effects{true, Reads::r, Writes::w, Flow::f};
#include "tracer/register_effects.def"
#undef REGFX
  }
};

const EffectTable& effects() {
  static const EffectTable t;
  return t;
}

bool reads_register(const Instr& in, Reads r, uint32_t reg) {
  const uint32_t a = in.a, b = in.b, c = in.c;
  switch (r) {
    case Reads::none: return false;
    case Reads::A: return reg == a;
    case Reads::B: return reg == b;
    case Reads::AB: return reg == a || reg == b;
    case Reads::BC: return reg == b || reg == c;
    case Reads::ABC: return reg == a || reg == b || reg == c;
    case Reads::A4: return reg >= a && reg <= a + 3;
    case Reads::AtoAB: return reg >= a && reg <= a + b;
    case Reads::Aup: return reg >= a;
    case Reads::BtoBC1: return reg >= b && reg < b + c;
    case Reads::ABtoBC1: return reg == a || (reg >= b && reg < b + c);
    case Reads::BtoBC: return reg >= b && reg <= b + c;
    case Reads::AtoACB: return (reg >= a && reg <= a + c) || reg == b;
  }
  return true;
}

}  // namespace

bool has_register_effects(Op op) { return effects().rows[static_cast<int>(op)].present; }

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
      const Effects& fx = effects().rows[static_cast<int>(in.op)];
      if (!fx.present || reads_register(in, fx.reads, reg)) return true;
      if (fx.writes == Writes::A && in.a == reg) break;  // written first: dead on this path
      if (fx.flow == Flow::ret) break;
      if (fx.flow == Flow::cmp) work.push_back(at + 2);  // the test holds: past the JMP
      const int64_t target = static_cast<int64_t>(at) + 1 + in.sbx;
      if (fx.flow == Flow::jump || fx.flow == Flow::branch) {
        if (target < 0) return true;
        if (fx.flow == Flow::jump) {
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
