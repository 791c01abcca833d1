#include "codegen/host/asmjit/linear_scan.h"

#include <algorithm>

namespace tessera::jit::t1 {

namespace {

// Where `iv` is next read at or after position `at`: a value read in the
// loop body that lives to the end is read again on the next iteration.
uint64_t next_read(const LiveInterval& iv, uint32_t at, IRRef loop, uint32_t n) {
  if (iv.reads.empty()) return iv.end;
  auto it = std::lower_bound(iv.reads.begin(), iv.reads.end(), at);
  if (it != iv.reads.end()) return *it;
  if (loop != kNoRef && iv.end >= n) {
    auto body = std::upper_bound(iv.reads.begin(), iv.reads.end(), loop);
    if (body != iv.reads.end()) return uint64_t{n} + (*body - loop);
  }
  return iv.end;
}

}  // namespace

RegAssignment linear_scan(const TraceIR& ir, const TraceLiveness& lv, const RegisterSet& regs) {
  RegAssignment out;
  out.reg.assign(ir.size(), kNoReg);
  out.slot.assign(ir.size(), 0);
  for (const LiveInterval& iv : lv.intervals) out.slot[iv.ref] = out.num_slots++;
  const uint32_t n = static_cast<uint32_t>(ir.size());

  // Free registers per class, kept in preference order.
  std::vector<uint8_t> free_gpr = regs.gpr, free_xmm = regs.xmm;
  auto pool = [&](RegClass c) -> std::vector<uint8_t>& { return c == RegClass::Gpr ? free_gpr : free_xmm; };
  auto release = [&](const LiveInterval& iv) {
    std::vector<uint8_t>& p = pool(iv.cls);
    const std::vector<uint8_t>& order = iv.cls == RegClass::Gpr ? regs.gpr : regs.xmm;
    // Reinsert at its place in the preference order.
    auto rank = [&](uint8_t r) { return std::find(order.begin(), order.end(), r) - order.begin(); };
    p.insert(std::upper_bound(p.begin(), p.end(), out.reg[iv.ref],
                              [&](uint8_t a, uint8_t b) { return rank(a) < rank(b); }),
             out.reg[iv.ref]);
  };
  auto preserved = [&](uint8_t r) { return (regs.gpr_call_preserved >> r) & 1u; };
  // A next value that took over its PHI entry value's register keeps it:
  // the back-edge writes the entry value's location, which nothing else
  // may hold at the end.
  auto pinned = [&](const LiveInterval& iv) { return iv.takes_register_of != kNoRef && out.reg[iv.ref] != kNoReg; };

  std::vector<const LiveInterval*> active;  // holding a register
  for (const LiveInterval& iv : lv.intervals) {
    // Expire intervals that ended before this one starts. An interval that
    // ends where this one starts keeps its register: the instruction reads
    // its operands while it writes its result.
    for (auto it = active.begin(); it != active.end();) {
      if ((*it)->end < iv.start) {
        release(**it);
        it = active.erase(it);
      } else {
        ++it;
      }
    }
    // A PHI's next value takes over its entry value's register, where the
    // entry value has one and ends here.
    if (iv.takes_register_of != kNoRef) {
      auto entry = std::find_if(active.begin(), active.end(), [&](const LiveInterval* a) {
        return a->ref == iv.takes_register_of && a->cls == iv.cls && a->end == iv.start;
      });
      if (entry != active.end()) {
        out.reg[iv.ref] = out.reg[(*entry)->ref];
        active.erase(entry);
        active.push_back(&iv);
        continue;
      }
    }
    std::vector<uint8_t>& p = pool(iv.cls);
    if (!p.empty()) {
      // Values that cross a call take a preserved register if one is free;
      // others take the first call-clobbered one, leaving the preserved ones.
      auto pick = p.begin();
      if (iv.cls == RegClass::Gpr) {
        auto want = std::find_if(p.begin(), p.end(), [&](uint8_t r) { return preserved(r) == iv.crosses_call; });
        if (want != p.end()) pick = want;
      }
      out.reg[iv.ref] = *pick;
      p.erase(pick);
      active.push_back(&iv);
      continue;
    }
    // No register: spill whichever of this interval and the active ones of
    // its class is read next furthest away (Belady), on a tie the one that
    // ends last.
    const LiveInterval* victim = &iv;
    auto key = [&](const LiveInterval* v) { return std::pair{next_read(*v, iv.start, lv.loop, n), v->end}; };
    auto victim_key = key(victim);
    for (const LiveInterval* a : active) {
      if (a->cls != iv.cls || pinned(*a)) continue;
      auto k = key(a);
      if (k > victim_key) {
        victim = a;
        victim_key = k;
      }
    }
    ++out.spilled;
    if (victim == &iv) continue;
    out.reg[iv.ref] = out.reg[victim->ref];
    out.reg[victim->ref] = kNoReg;
    std::erase(active, victim);
    active.push_back(&iv);
  }
  return out;
}

}  // namespace tessera::jit::t1
