// T1's linear-scan register allocator (codegen/host/asmjit/linear_scan.h):
// intervals given by hand (the allocator reads only their positions, classes
// and call crossings, and the trace's size) and intervals computed from a
// trace (live_intervals.h); assignments, spills (the value read next
// furthest away), call-preserved registers, PHIs whose next value takes
// over the entry value's register, and the invariant that no two
// overlapping intervals share a register.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>

#include "codegen/host/asmjit/linear_scan.h"
#include "deopt/exit_plan.h"

namespace tessera::jit::t1 {
namespace {

// x86-64 encodings: rax 0, rcx 1, rdx 2, rbx 3, ..., r12 12; xmm0 0 ...
constexpr uint8_t kRax = 0, kRcx = 1, kRdx = 2, kRbx = 3, kR12 = 12;

// rax, rcx, rdx are call-clobbered, rbx and r12 preserved (System V).
RegisterSet small_set() {
  RegisterSet s;
  s.gpr = {kRax, kRcx, kRdx, kRbx, kR12};
  s.xmm = {0, 1};
  s.gpr_call_preserved = (1u << kRbx) | (1u << kR12);
  return s;
}

RegisterSet gprs(std::vector<uint8_t> regs) {
  RegisterSet s;
  s.gpr = std::move(regs);
  return s;
}

// A trace of n instructions (their kind does not matter to the allocator).
TraceIR trace_of(size_t n) {
  TraceIR ir;
  while (ir.size() < n) ir.emit(IROp::SLOAD, IRType::Int, static_cast<uint32_t>(ir.size()), 0);
  return ir;
}

LiveInterval iv(IRRef ref, uint32_t start, uint32_t end, RegClass cls = RegClass::Gpr, bool crosses_call = false,
                std::vector<uint32_t> reads = {}) {
  LiveInterval v;
  v.reads = std::move(reads);
  v.ref = ref;
  v.start = start;
  v.end = end;
  v.cls = cls;
  v.crosses_call = crosses_call;
  return v;
}

struct Allocation {
  TraceLiveness lv;
  RegAssignment out;
};

// Intervals by start (as compute_liveness gives them), each for the
// instruction at its start.
Allocation allocate(std::vector<LiveInterval> intervals, const RegisterSet& regs) {
  Allocation a;
  a.lv.intervals = std::move(intervals);
  uint32_t last = 0;
  for (const LiveInterval& v : a.lv.intervals) last = std::max({last, v.end, v.ref});
  a.out = linear_scan(trace_of(last + 1), a.lv, regs);
  return a;
}

// The allocator's invariants: each interval has its own slot; a register
// comes from its class's set; overlapping intervals of one class (an end
// equal to a start overlaps: the instruction reads while it writes) never
// share one; `spilled` counts the intervals without one.
void expect_invariants(const Allocation& a, const RegisterSet& regs) {
  const auto& ivs = a.lv.intervals;
  EXPECT_EQ(a.out.num_slots, ivs.size());
  std::vector<uint32_t> slots;
  uint32_t without = 0;
  for (const LiveInterval& v : ivs) {
    slots.push_back(a.out.slot[v.ref]);
    const uint8_t r = a.out.reg[v.ref];
    if (r == kNoReg) {
      ++without;
      continue;
    }
    const auto& set = v.cls == RegClass::Gpr ? regs.gpr : regs.xmm;
    EXPECT_NE(std::find(set.begin(), set.end(), r), set.end()) << "%" << v.ref << " got register " << int{r};
  }
  std::sort(slots.begin(), slots.end());
  EXPECT_EQ(std::adjacent_find(slots.begin(), slots.end()), slots.end()) << "two values share a stack slot";
  EXPECT_EQ(a.out.spilled, without);
  for (size_t i = 0; i < ivs.size(); ++i)
    for (size_t j = i + 1; j < ivs.size(); ++j) {
      const LiveInterval &x = ivs[i], &y = ivs[j];
      const bool overlap = x.start <= y.end && y.start <= x.end;
      if (x.cls != y.cls || !overlap || a.out.reg[x.ref] == kNoReg) continue;
      // A PHI's next value takes over its entry value's register where the
      // entry value ends (live_intervals.h).
      if (y.takes_register_of == x.ref && x.end == y.start) continue;
      EXPECT_NE(a.out.reg[x.ref], a.out.reg[y.ref])
          << "%" << x.ref << " [" << x.start << "," << x.end << "] and %" << y.ref << " [" << y.start << ","
          << y.end << "] share a register";
    }
}

TEST(LinearScan, DisjointIntervalsReuseTheFirstRegister) {
  const RegisterSet regs = gprs({kRax, kRcx});
  Allocation a = allocate({iv(0, 0, 1), iv(2, 2, 3), iv(4, 4, 5)}, regs);
  expect_invariants(a, regs);
  for (IRRef r : {0, 2, 4}) EXPECT_EQ(a.out.reg[r], kRax) << "%" << r;
  EXPECT_EQ(a.out.spilled, 0u);
  EXPECT_EQ(a.out.reg[1], kNoReg);  // no value
}

TEST(LinearScan, AnIntervalEndingWhereTheNextStartsKeepsItsRegister) {
  const RegisterSet regs = gprs({kRax, kRcx});
  Allocation a = allocate({iv(0, 0, 2), iv(2, 2, 4)}, regs);
  expect_invariants(a, regs);
  EXPECT_EQ(a.out.reg[0], kRax);
  EXPECT_EQ(a.out.reg[2], kRcx);
}

TEST(LinearScan, AFreedRegisterGoesBackToItsPlaceInThePreferenceOrder) {
  const RegisterSet regs = gprs({kRax, kRcx, kRdx});
  // %0 takes rax, %1 rcx; %0 ends, so %3 gets rax again (not rdx, the next free).
  Allocation a = allocate({iv(0, 0, 1), iv(1, 1, 5), iv(3, 3, 5)}, regs);
  expect_invariants(a, regs);
  EXPECT_EQ(a.out.reg[0], kRax);
  EXPECT_EQ(a.out.reg[1], kRcx);
  EXPECT_EQ(a.out.reg[3], kRax);
}

// With both registers taken, %2 arrives: whichever of %1 and %2 ends last
// gets no register (the other takes rcx).
TEST(LinearScan, SpillsWhicheverIntervalEndsLast) {
  const RegisterSet regs = gprs({kRax, kRcx});
  struct Case {
    uint32_t end1, end2;
    IRRef spilled, kept;
  };
  for (const Case& c : {Case{9, 5, 1, 2}, Case{5, 9, 2, 1}}) {
    Allocation a = allocate({iv(0, 0, 4), iv(1, 1, c.end1), iv(2, 2, c.end2)}, regs);
    expect_invariants(a, regs);
    EXPECT_EQ(a.out.spilled, 1u);
    EXPECT_EQ(a.out.reg[0], kRax);
    EXPECT_EQ(a.out.reg[c.spilled], kNoReg) << "%1 ends at " << c.end1 << ", %2 at " << c.end2;
    EXPECT_EQ(a.out.reg[c.kept], kRcx) << "%1 ends at " << c.end1 << ", %2 at " << c.end2;
  }
}

TEST(LinearScan, ValuesAcrossCallsTakePreservedRegistersOthersLeaveThem) {
  const RegisterSet regs = small_set();
  Allocation a = allocate({iv(0, 0, 9, RegClass::Gpr, true), iv(1, 1, 9), iv(2, 2, 9, RegClass::Gpr, true),
                           iv(3, 3, 9)},
                          regs);
  expect_invariants(a, regs);
  EXPECT_EQ(a.out.reg[0], kRbx);  // the first preserved register, though rax comes first
  EXPECT_EQ(a.out.reg[1], kRax);  // the first clobbered one
  EXPECT_EQ(a.out.reg[2], kR12);
  EXPECT_EQ(a.out.reg[3], kRcx);
}

TEST(LinearScan, AValueAcrossACallTakesAClobberedRegisterWhenNoPreservedOneIsFree) {
  const RegisterSet regs = small_set();
  Allocation a = allocate({iv(0, 0, 9, RegClass::Gpr, true), iv(1, 1, 9, RegClass::Gpr, true),
                           iv(2, 2, 9, RegClass::Gpr, true)},
                          regs);
  expect_invariants(a, regs);
  EXPECT_EQ(a.out.reg[0], kRbx);
  EXPECT_EQ(a.out.reg[1], kR12);
  EXPECT_EQ(a.out.reg[2], kRax);  // saved around the call in its slot
  EXPECT_EQ(a.out.spilled, 0u);
}

TEST(LinearScan, ClassesHaveTheirOwnRegisters) {
  const RegisterSet regs = small_set();  // two XMM registers
  Allocation a = allocate({iv(0, 0, 9, RegClass::Xmm), iv(1, 1, 9, RegClass::Xmm), iv(2, 2, 9),
                           iv(3, 3, 9, RegClass::Xmm)},
                          regs);
  expect_invariants(a, regs);
  EXPECT_EQ(a.out.reg[0], 0);
  EXPECT_EQ(a.out.reg[1], 1);
  EXPECT_EQ(a.out.reg[2], kRax);  // XMM pressure spills no GPR
  EXPECT_EQ(a.out.spilled, 1u);
  EXPECT_EQ(a.out.reg[3], kNoReg);  // all three XMM values end together: the newest spills
}

// Random intervals under register pressure: the invariants hold whatever
// the mix of lengths, classes and calls.
TEST(LinearScan, InvariantsHoldOnRandomIntervals) {
  std::mt19937 rng(37);
  for (int round = 0; round < 200; ++round) {
    const RegisterSet regs = small_set();
    const uint32_t n = 5 + rng() % 60;
    std::vector<LiveInterval> ivs;
    for (uint32_t p = 0; p < n; ++p) {
      if (rng() % 4 == 0) continue;  // an instruction without a value
      const uint32_t end = std::min<uint32_t>(n, p + rng() % 20);
      ivs.push_back(iv(p, p, end, rng() % 3 ? RegClass::Gpr : RegClass::Xmm, rng() % 2));
    }
    Allocation a = allocate(ivs, regs);
    expect_invariants(a, regs);
    if (HasFailure()) {
      ADD_FAILURE() << "round " << round;
      return;
    }
  }
}

// Where the intervals say where they are read, the one read next furthest
// away spills, though all three end together.
TEST(LinearScan, SpillsTheValueReadNextFurthestAway) {
  const RegisterSet regs = gprs({kRax, kRcx});
  // %0 is read at 3 and 9, %1 only at the end (9), %2 at 4 and 9: at 2,
  // %1's next read is furthest.
  Allocation a = allocate({iv(0, 0, 9, RegClass::Gpr, false, {3, 9}), iv(1, 1, 9, RegClass::Gpr, false, {9}),
                           iv(2, 2, 9, RegClass::Gpr, false, {4, 9})},
                          regs);
  expect_invariants(a, regs);
  EXPECT_EQ(a.out.spilled, 1u);
  EXPECT_EQ(a.out.reg[1], kNoReg);
  EXPECT_EQ(a.out.reg[0], kRax);
  EXPECT_EQ(a.out.reg[2], kRcx);
}

// A counting loop: i and s are loop-carried (PHIs), n is read on every
// iteration. Optionally an exit after the increment reads the old i.
struct CountingLoop {
  TraceIR ir;
  IRRef i, n, s, s2, i2;
};
CountingLoop counting_loop(bool exit_reads_old_i) {
  CountingLoop c;
  TraceIR& ir = c.ir;
  ir.snapshots().push_back(Snapshot{});
  c.i = ir.emit(IROp::SLOAD, IRType::Int, 0, 0, 0);
  c.n = ir.emit(IROp::SLOAD, IRType::Int, 1, 0, 0);
  c.s = ir.emit(IROp::SLOAD, IRType::Int, 2, 0, 0);
  ir.emit(IROp::LOOP, IRType::None);
  Snapshot in_loop;
  in_loop.entries = {{0, c.i}, {2, c.s}};
  ir.snapshots().push_back(in_loop);
  IRRef done = ir.emit(IROp::GE, IRType::Bool, c.i, c.n);
  ir.emit(IROp::GUARDF, IRType::None, done, 0, 1);
  c.s2 = ir.emit(IROp::ADD, IRType::Int, c.s, c.i);
  c.i2 = ir.emit(IROp::ADD, IRType::Int, c.i, ir.kint(1));
  if (exit_reads_old_i) {
    IRRef big = ir.emit(IROp::GE, IRType::Bool, c.i2, c.n);
    ir.emit(IROp::GUARDF, IRType::None, big, 0, 1);  // its exit reads i
  }
  ir.emit(IROp::PHI, IRType::Int, c.i, c.i2);
  ir.emit(IROp::PHI, IRType::Int, c.s, c.s2);
  return c;
}

const LiveInterval& interval_of(const TraceLiveness& lv, IRRef r) {
  auto it = std::find_if(lv.intervals.begin(), lv.intervals.end(), [&](const LiveInterval& v) { return v.ref == r; });
  if (it == lv.intervals.end()) throw std::runtime_error("no interval for %" + std::to_string(r));
  return *it;
}

bool any_binary(IROp op) { return op == IROp::ADD || op == IROp::SUB; }

// Intervals from a real trace (compute_liveness), allocated with only two
// GPRs: without register sharing, every value read on the next iteration
// lives to the end.
TEST(LinearScan, ATraceLoopUnderPressure) {
  CountingLoop c = counting_loop(false);
  Allocation a;
  a.lv = compute_liveness(c.ir, plan_exits(c.ir));
  for (IRRef r : {c.i, c.n, c.s}) EXPECT_EQ(interval_of(a.lv, r).end, c.ir.size()) << "%" << r;
  EXPECT_EQ(interval_of(a.lv, c.i2).takes_register_of, kNoRef);
  const RegisterSet regs = gprs({kRax, kRcx});
  a.out = linear_scan(c.ir, a.lv, regs);
  expect_invariants(a, regs);
  EXPECT_GT(a.out.spilled, 0u);
}

// With register sharing, i's next value is made where i is read for the
// last time: i ends there and i+1 takes its register (the back-edge moves
// nothing); likewise s and s+i.
TEST(LinearScan, APhisNextValueTakesOverTheEntryValuesRegister) {
  CountingLoop c = counting_loop(false);
  Allocation a;
  a.lv = compute_liveness(c.ir, plan_exits(c.ir), any_binary);
  EXPECT_EQ(interval_of(a.lv, c.i).end, c.i2);
  EXPECT_EQ(interval_of(a.lv, c.s).end, c.s2);
  EXPECT_EQ(interval_of(a.lv, c.n).end, c.ir.size());
  EXPECT_EQ(interval_of(a.lv, c.i2).takes_register_of, c.i);
  EXPECT_EQ(interval_of(a.lv, c.s2).takes_register_of, c.s);
  const RegisterSet regs = gprs({kRax, kRcx, kRdx, kRbx});
  a.out = linear_scan(c.ir, a.lv, regs);
  expect_invariants(a, regs);
  EXPECT_EQ(a.out.spilled, 0u);
  ASSERT_NE(a.out.reg[c.i], kNoReg);
  EXPECT_EQ(a.out.reg[c.i2], a.out.reg[c.i]);
  EXPECT_EQ(a.out.reg[c.s2], a.out.reg[c.s]);
}

// An exit after i+1 restores the old i and s: they keep their own registers.
TEST(LinearScan, AnEntryValueReadAfterItsNextValueKeepsItsRegister) {
  CountingLoop c = counting_loop(true);
  Allocation a;
  a.lv = compute_liveness(c.ir, plan_exits(c.ir), any_binary);
  EXPECT_EQ(interval_of(a.lv, c.i2).takes_register_of, kNoRef);
  EXPECT_EQ(interval_of(a.lv, c.i).end, c.ir.size());
  EXPECT_EQ(interval_of(a.lv, c.s2).takes_register_of, kNoRef);
  const RegisterSet regs = gprs({kRax, kRcx, kRdx, kRbx});
  a.out = linear_scan(c.ir, a.lv, regs);
  expect_invariants(a, regs);
  EXPECT_NE(a.out.reg[c.i2], a.out.reg[c.i]);
}

// Not where the backend says the instruction may not share (the predicate).
TEST(LinearScan, NoSharingWhereTheBackendRefusesIt) {
  CountingLoop c = counting_loop(false);
  TraceLiveness lv = compute_liveness(c.ir, plan_exits(c.ir), [](IROp) { return false; });
  EXPECT_EQ(interval_of(lv, c.i2).takes_register_of, kNoRef);
  EXPECT_EQ(interval_of(lv, c.i).end, c.ir.size());
}

// A next value holding its entry value's register is never the one that
// spills (the back-edge writes that register): with one register left, the
// newcomer spills even though the next value is read later.
TEST(LinearScan, ANextValueThatTookARegisterIsNotSpilled) {
  const RegisterSet regs = gprs({kRax, kRcx});
  LiveInterval entry = iv(0, 0, 3, RegClass::Gpr, false, {3});
  LiveInterval next = iv(3, 3, 20, RegClass::Gpr, false, {20});
  next.takes_register_of = 0;
  Allocation a = allocate({entry, iv(1, 1, 20, RegClass::Gpr, false, {5, 20}), next,
                           iv(4, 4, 20, RegClass::Gpr, false, {6, 20})},
                          regs);
  expect_invariants(a, regs);
  EXPECT_EQ(a.out.reg[3], a.out.reg[0]);
  EXPECT_NE(a.out.reg[3], kNoReg);
  EXPECT_EQ(a.out.reg[1], kRcx);
  EXPECT_EQ(a.out.reg[4], kNoReg);
  EXPECT_EQ(a.out.spilled, 1u);
}

}  // namespace
}  // namespace tessera::jit::t1
