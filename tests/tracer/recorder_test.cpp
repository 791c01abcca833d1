// TraceRecorder, script in / IR out: a script runs in the VM with the trace
// compiler's optimizer off (opt=0), so each compiled trace's IR is exactly
// what the recorder produced; the tests compare it with the expected text
// (up to value numbering, tests/tracer/ir_match.h) and count its guards.
//
// Register numbers in SLOAD and snapshot entries are the bytecode
// compiler's: n=0 (the parameter), then the locals in declaration order,
// then the `for` loop's hidden registers (counter, limit) and temporaries.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/hotspot_observer.h"
#include "tests/runtime/script_runner.h"
#include "tests/tracer/ir_match.h"
#include "vm/graph/region.h"

namespace tessera {
namespace {

// The optimizer off: the trace's IR is the recording. Synchronous T1
// compiles (the quickest to get a trace), hot at the third back-edge, and
// no side traces (maxside=0), so that only the root trace exists.
JitParams recorder_params() {
  JitParams p;
  p.set("opt=0");
  p.set("async=0");
  p.set("tier=1");
  p.set("hotloop=3");
  p.set("maxside=0");
  return p;
}

// Every hex number "0x..." in `text` replaced by "0xADDR". (By hand, not
// std::regex: GCC 12's -Wmaybe-uninitialized misfires inside std::regex
// under the sanitizers, which -Werror makes a build failure.)
std::string mask_addresses(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const bool hex = text.compare(i, 2, "0x") == 0 && i + 2 < text.size() &&
                     std::isxdigit(static_cast<unsigned char>(text[i + 2]));
    if (hex) {
      out += "0xADDR";
      i += 2;
      while (i < text.size() && std::isxdigit(static_cast<unsigned char>(text[i]))) ++i;
    } else {
      out += text[i++];
    }
  }
  return out;
}

struct Recording {
  std::unique_ptr<HotspotObserver> rt;
  std::string ir;  // the root trace's IR, helper and object addresses masked
};

// Runs `src` (which must print `want`) and returns its only trace.
Recording record(const std::string& src, const std::string& want) {
  Recording r{std::make_unique<HotspotObserver>(recorder_params()), {}};
  testing::Outcome o = testing::run_script(src, r.rt.get(), true);
  EXPECT_EQ(o.status, RunStatus::Ok) << o.err;
  EXPECT_EQ(o.out, want);
  const auto& traces = r.rt->tracing()->traces();
  EXPECT_EQ(traces.size(), 1u);
  if (traces.empty()) return r;
  const jit::Trace& t = *traces[0];
  // opt=0: nothing changed the recording.
  EXPECT_EQ(t.ir.size(), t.recorded_size);
  // Helper and object pointers differ from run to run: they print as 0xADDR.
  r.ir = mask_addresses(jit::print_ir(t.ir));
  return r;
}

// Guards of the root trace, per opcode (GUARDT, SLOAD, LLOAD, ...).
std::map<std::string, int> guards(const HotspotObserver& rt) {
  std::map<std::string, int> n;
  const jit::TraceIR& ir = rt.tracing()->traces().at(0)->ir;
  for (const jit::IRIns& in : ir.instructions())
    if (jit::ir_is_guard(in.op)) ++n[jit::ir_op_info(in.op).name];
  return n;
}

using Counts = std::map<std::string, int>;

// Entry loads of every register the body reads, hoisted before LOOP (their
// type guards exit through snapshot 0); the body's adds; the loop test as a
// guard (GT: iterations left > 0); a PHI per loop-carried register: it lives
// in SSA only (no store per iteration), and the exit's snapshot writes it
// back, with the PHI's value where the iteration has not changed it yet
// (slots 2, 3 and 5 at the loop test; slot 1 was just written).
TEST(Recorder, CountingLoop) {
  Recording r = record("fn f(n) {\n  let s = 0\n  for i in range(n) { s += i }\n  return s\n}\nprint(f(100))\n",
                       "4950\n");
  EXPECT_IR_EQ(r.ir,
               "0000    int  KINT   0\n"
               "0001    int  KINT   1\n"
               "0002 >  int  SLOAD  1  0  #0\n"
               "0003 >  int  SLOAD  5  0  #0\n"
               "0004 >  int  SLOAD  3  0  #0\n"
               "0005 >  int  SLOAD  4  0  #0\n"
               "0006 >  int  SLOAD  2  0  #0\n"
               "0007    none LOOP\n"
               "0008    int  ADD    0002  0003\n"
               "0009    bool GT     0004  0000\n"
               "0010 >  none GUARDT 0009  #1\n"
               "0011    int  ADD    0006  0005\n"
               "0012    int  SUB    0004  0001\n"
               "0013    int  PHI    0002  0008\n"
               "0014    int  PHI    0006  0011\n"
               "0015    int  PHI    0004  0012\n"
               "0016    int  PHI    0003  0011\n"
               "SNAP #0 ir=0002 pc=5 frames=[] []\n"
               "SNAP #1 ir=0010 pc=6 frames=[] [1=0008 2=0006 3=0004 5=0003]\n");
  EXPECT_EQ(guards(*r.rt), (Counts{{"GUARDT", 1}, {"SLOAD", 5}}));
}

// x is a float from the entry load on: FMUL by the constant, the int loop
// variable converted (CONV) for the FADD, a float PHI.
TEST(Recorder, FloatLoop) {
  Recording r = record(
      "fn f(n) {\n  let x = 0.0\n  for i in range(n) { x = x * 0.5 + i }\n  return x\n}\nprint(f(100))\n", "196.0\n");
  EXPECT_IR_EQ(r.ir,
               "0000    flt  KFLOAT 0.5\n"
               "0001    int  KINT   0\n"
               "0002    int  KINT   1\n"
               "0003 >  flt  SLOAD  1  0  #0\n"
               "0004 >  int  SLOAD  5  0  #0\n"
               "0005 >  int  SLOAD  3  0  #0\n"
               "0006 >  int  SLOAD  4  0  #0\n"
               "0007 >  int  SLOAD  2  0  #0\n"
               "0008    none LOOP\n"
               "0009    flt  FMUL   0003  0000\n"
               "0010    flt  CONV   0004\n"
               "0011    flt  FADD   0009  0010\n"
               "0012    bool GT     0005  0001\n"
               "0013 >  none GUARDT 0012  #1\n"
               "0014    int  ADD    0007  0006\n"
               "0015    int  SUB    0005  0002\n"
               "0016    flt  PHI    0003  0011\n"
               "0017    int  PHI    0007  0014\n"
               "0018    int  PHI    0005  0015\n"
               "0019    int  PHI    0004  0014\n"
               "SNAP #0 ir=0003 pc=5 frames=[] []\n"
               "SNAP #1 ir=0013 pc=7 frames=[] [1=0011 2=0007 3=0005 5=0004]\n");
  EXPECT_EQ(guards(*r.rt), (Counts{{"GUARDT", 1}, {"SLOAD", 5}}));
}

// The `if` recorded on the path taken (i < 1000): its condition becomes a
// GUARDT whose snapshot resumes at the `if` (pc 5), before the loop test's.
TEST(Recorder, BranchBecomesAGuard) {
  Recording r = record(
      "fn f(n) {\n  let a = 0\n  for i in range(n) {\n    if i < 1000 { a += 2 } else { a -= 1 }\n  }\n"
      "  return a\n}\nprint(f(100))\n",
      "200\n");
  EXPECT_IR_EQ(r.ir,
               "0000    int  KINT   1000\n"
               "0001    int  KINT   2\n"
               "0002    int  KINT   0\n"
               "0003    int  KINT   1\n"
               "0004 >  int  SLOAD  5  0  #0\n"
               "0005 >  int  SLOAD  1  0  #0\n"
               "0006 >  int  SLOAD  3  0  #0\n"
               "0007 >  int  SLOAD  4  0  #0\n"
               "0008 >  int  SLOAD  2  0  #0\n"
               "0009    none LOOP\n"
               "0010    bool LT     0004  0000\n"
               "0011 >  none GUARDT 0010  #1\n"
               "0012    int  ADD    0005  0001\n"
               "0013    bool GT     0006  0002\n"
               "0014 >  none GUARDT 0013  #2\n"
               "0015    int  ADD    0008  0007\n"
               "0016    int  SUB    0006  0003\n"
               "0017    int  PHI    0005  0012\n"
               "0018    int  PHI    0008  0015\n"
               "0019    int  PHI    0006  0016\n"
               "0020    int  PHI    0004  0015\n"
               "SNAP #0 ir=0004 pc=5 frames=[] []\n"
               "SNAP #1 ir=0011 pc=5 frames=[] [1=0005 2=0008 3=0006 5=0004]\n"
               "SNAP #2 ir=0014 pc=10 frames=[] [1=0012 2=0008 3=0006 5=0004]\n");
  EXPECT_EQ(guards(*r.rt), (Counts{{"GUARDT", 2}, {"SLOAD", 5}}));
}

// l[i]: the length (LLEN), one unsigned compare for 0 <= i < len (ULT) as a
// guard, and the element load that guards the element's type (LLOAD), both
// resuming at the index instruction.
TEST(Recorder, ListElementLoadIsBoundsChecked) {
  Recording r = record(
      "fn f(l) {\n  let s = 0\n  for i in range(len(l)) { s += l[i] }\n  return s\n}\n"
      "print(f([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]))\n",
      "55\n");
  EXPECT_IR_EQ(r.ir,
               "0000    int  KINT   0\n"
               "0001    int  KINT   1\n"
               "0002 >  list SLOAD  0  0  #0\n"
               "0003 >  int  SLOAD  5  0  #0\n"
               "0004 >  int  SLOAD  1  0  #0\n"
               "0005 >  int  SLOAD  3  0  #0\n"
               "0006 >  int  SLOAD  4  0  #0\n"
               "0007 >  int  SLOAD  2  0  #0\n"
               "0008    none LOOP\n"
               "0009    int  LLEN   0002\n"
               "0010    bool ULT    0003  0009\n"
               "0011 >  none GUARDT 0010  #1\n"
               "0012 >  int  LLOAD  0002  0003  #1\n"
               "0013    int  ADD    0004  0012\n"
               "0014    bool GT     0005  0000\n"
               "0015 >  none GUARDT 0014  #2\n"
               "0016    int  ADD    0007  0006\n"
               "0017    int  SUB    0005  0001\n"
               "0018    int  PHI    0004  0013\n"
               "0019    int  PHI    0007  0016\n"
               "0020    int  PHI    0005  0017\n"
               "0021    int  PHI    0003  0016\n"
               "SNAP #0 ir=0002 pc=7 frames=[] []\n"
               "SNAP #1 ir=0011 pc=7 frames=[] [1=0004 2=0007 3=0005 5=0003]\n"
               "SNAP #2 ir=0015 pc=9 frames=[] [1=0013 2=0007 3=0005 5=0003]\n");
  EXPECT_EQ(guards(*r.rt), (Counts{{"GUARDT", 2}, {"LLOAD", 1}, {"SLOAD", 6}}));
}

// sq(i) leaves no call: its body (MUL) is recorded in place, the global sq
// is assumed to keep the function (ASSUME; a store into it invalidates the
// trace), so there is no load or identity guard for it either.
// The function constant reads as what it is (`-- fn sq`, the text form's
// description), as do the built-ins below.
TEST(Recorder, CallOfAUserFunctionIsInlined) {
  Recording r = record(
      "fn sq(x) { return x * x }\n"
      "fn f(n) {\n  let s = 0\n  for i in range(n) { s += sq(i) }\n  return s\n}\nprint(f(100))\n",
      "328350\n");
  EXPECT_IR_EQ(r.ir,
               "0000    func KOBJ   0xADDR  -- fn sq\n"
               "0001    int  KINT   0\n"
               "0002    int  KINT   1\n"
               "0003 >  int  SLOAD  5  0  #0\n"
               "0004 >  int  SLOAD  1  0  #0\n"
               "0005 >  int  SLOAD  3  0  #0\n"
               "0006 >  int  SLOAD  4  0  #0\n"
               "0007 >  int  SLOAD  2  0  #0\n"
               "0008    none LOOP\n"
               "0009    int  MUL    0003  0003\n"
               "0010    int  ADD    0004  0009\n"
               "0011    bool GT     0005  0001\n"
               "0012 >  none GUARDT 0011  #1\n"
               "0013    int  ADD    0007  0006\n"
               "0014    int  SUB    0005  0002\n"
               "0015    int  PHI    0004  0010\n"
               "0016    int  PHI    0007  0013\n"
               "0017    int  PHI    0005  0014\n"
               "0018    int  PHI    0003  0013\n"
               "SNAP #0 ir=0003 pc=5 frames=[] []\n"
               "SNAP #1 ir=0012 pc=9 frames=[] [1=0010 2=0007 3=0005 5=0003]\n"
               "ASSUME global=0 value=0xADDR  -- fn sq\n");
  EXPECT_EQ(guards(*r.rt), (Counts{{"GUARDT", 1}, {"SLOAD", 5}}));
  const jit::TraceIR& ir = r.rt->tracing()->traces().at(0)->ir;
  EXPECT_TRUE(ir.calls().empty());
  ASSERT_EQ(ir.assumed_globals().size(), 1u);
}

// A built-in with no instruction of its own (abs) is a helper CALL with its
// arguments chained by CARG; the result register is reloaded and
// type-guarded after the call (SLOAD op2 = 1).
TEST(Recorder, BuiltinCallIsAHelperCall) {
  Recording r = record("fn f(n) {\n  let s = 0\n  for i in range(n) { s = abs(i) }\n  return s\n}\nprint(f(100))\n",
                       "99\n");
  EXPECT_IR_EQ(r.ir,
               "0000    bltn KOBJ   0xADDR  -- built-in abs\n"
               "0001    int  KINT   0\n"
               "0002    int  KINT   1\n"
               "0003 >  int  SLOAD  5  0  #0\n"
               "0004 >  int  SLOAD  3  0  #0\n"
               "0005 >  int  SLOAD  4  0  #0\n"
               "0006 >  int  SLOAD  2  0  #0\n"
               "0007    none LOOP\n"
               "0008    none CALL   0003  0  #1\n"
               "0009 >  int  SLOAD  6  1  #2\n"
               "0010    bool GT     0004  0001\n"
               "0011 >  none GUARDT 0010  #3\n"
               "0012    int  ADD    0006  0005\n"
               "0013    int  SUB    0004  0002\n"
               "0014    none SSTORE 1  0009\n"
               "0015    int  PHI    0006  0012\n"
               "0016    int  PHI    0004  0013\n"
               "0017    int  PHI    0003  0012\n"
               "SNAP #0 ir=0003 pc=5 frames=[] []\n"
               "SNAP #1 ir=0008 pc=7 frames=[] [2=0006 3=0004 5=0003 6=0000 7=0003]\n"
               "SNAP #2 ir=0009 pc=8 frames=[] [2=0006 3=0004 5=0003]\n"
               "SNAP #3 ir=0011 pc=9 frames=[] [1=0009 2=0006 3=0004 5=0003]\n"
               "CALL #0 builtin 0 abs 0xADDR dest=6\n"
               "ASSUME global=2 value=0xADDR  -- built-in abs\n");
  const jit::TraceIR& ir = r.rt->tracing()->traces().at(0)->ir;
  ASSERT_EQ(ir.calls().size(), 1u);
  EXPECT_EQ(ir.calls()[0].kind(), jit::CallTarget::Kind::Builtin);
  EXPECT_EQ(ir.calls()[0].name, "abs");
}

// push(l, i) of a list is LPUSH, not a helper call: the list register is
// stored first (objects are owned by their slots) and the result register
// gets nil.
TEST(Recorder, PushOfAListIsAnLpush) {
  Recording r = record(
      "fn f(n) {\n  let l = []\n  for i in range(n) { push(l, i) }\n  return len(l)\n}\nprint(f(100))\n", "100\n");
  EXPECT_IR_EQ(r.ir,
               "0000    bltn KOBJ   0xADDR  -- built-in push\n"
               "0001    nil  KNIL\n"
               "0002    int  KINT   0\n"
               "0003    int  KINT   1\n"
               "0004 >  list SLOAD  1  0  #0\n"
               "0005 >  int  SLOAD  5  0  #0\n"
               "0006 >  int  SLOAD  3  0  #0\n"
               "0007 >  int  SLOAD  4  0  #0\n"
               "0008 >  int  SLOAD  2  0  #0\n"
               "0009    none LOOP\n"
               "0010    none SSTORE 7  0004\n"
               "0011    none LPUSH  0004  0005  #1\n"
               "0012    bool GT     0006  0002\n"
               "0013 >  none GUARDT 0012  #2\n"
               "0014    int  ADD    0008  0007\n"
               "0015    int  SUB    0006  0003\n"
               "0016    int  PHI    0008  0014\n"
               "0017    int  PHI    0006  0015\n"
               "0018    int  PHI    0005  0014\n"
               "SNAP #0 ir=0004 pc=5 frames=[] []\n"
               "SNAP #1 ir=0011 pc=8 frames=[] [2=0008 3=0006 5=0005 6=0000 8=0005]\n"
               "SNAP #2 ir=0013 pc=9 frames=[] [2=0008 3=0006 5=0005]\n"
               "ASSUME global=2 value=0xADDR  -- built-in push\n");
  const jit::TraceIR& ir = r.rt->tracing()->traces().at(0)->ir;
  EXPECT_TRUE(ir.calls().empty());
}

// The recorded trace's tensor operations (their Graph IR operations, one
// line per value after each CALL line), one text per call.
std::vector<std::string> graph_ops(const HotspotObserver& rt) {
  std::vector<std::string> out;
  for (const jit::CallTarget& c : rt.tracing()->traces().at(0)->ir.calls())
    out.push_back(c.graph ? c.graph->str() : "");
  return out;
}

// The typed calls' operations only.
std::vector<std::string> typed_graph_ops(const HotspotObserver& rt) {
  std::vector<std::string> out;
  for (std::string& o : graph_ops(rt))
    if (!o.empty()) out.push_back(std::move(o));
  return out;
}

// Guards of the root trace on what instruction: GUARDT on EQ of TDTYPE,
// TRANK, TDIM, LLEN or LLOAD (a shape's element) against a constant, or of
// two of them.
std::map<std::string, int> layout_guards(const HotspotObserver& rt) {
  std::map<std::string, int> n;
  const jit::TraceIR& ir = rt.tracing()->traces().at(0)->ir;
  for (const jit::IRIns& in : ir.instructions()) {
    if (in.op != jit::IROp::GUARDT || ir[in.op1].op != jit::IROp::EQ) continue;
    const jit::IRIns& a = ir[ir[in.op1].op1];
    const jit::IRIns& b = ir[ir[in.op1].op2];
    const auto is_layout = [](jit::IROp op) {
      return op == jit::IROp::TDTYPE || op == jit::IROp::TRANK || op == jit::IROp::TDIM || op == jit::IROp::LLEN ||
             op == jit::IROp::LLOAD;
    };
    if (!is_layout(a.op)) continue;
    const std::string lhs = jit::ir_op_info(a.op).name;
    if (b.op == jit::IROp::KINT) ++n[lhs + "==" + std::to_string(ir.const_int(ir[in.op1].op2))];
    else if (is_layout(b.op)) ++n[lhs + "==" + jit::ir_op_info(b.op).name];
  }
  return n;
}

// Tensor built-ins and operators are recorded as Graph IR operations:
// typed, with the keyword arguments bound as the op table binds them, and
// dims as symbols of the trace. x's columns and the row are one symbol (the
// broadcast makes them equal: one guard); x's rows keep their own, though
// they have the same size. Each tensor that enters the graph (x, row) is
// guarded once (dtype f32 = 0, rank); results of typed calls are not.
TEST(Recorder, TensorOperationsAreGraphOperationsWithSymbolicDims) {
  Recording r = record(
      "fn f(n) {\n  let x = ones([64, 64])\n  let row = ones([64])\n  let s = 0.0\n"
      "  for i in range(n) {\n    let z = softmax((x + row) * 0.5, axis=-1)\n    s += item(sum(z))\n  }\n"
      "  return s\n}\nprint(f(10))\n",
      "640.0\n");
  ASSERT_FALSE(r.ir.empty());
  EXPECT_EQ(graph_ops(*r.rt),
            (std::vector<std::string>{
                "%0 = input : f32[s0, s1]\n%1 = input : f32[s1]\n%2 = add(%0, %1) : f32[s0, s1]\noutputs\n",
                "%0 = input : f32[s0, s1]\n%1 = input : float\n%2 = mul(%0, %1) : f32[s0, s1]\noutputs\n",
                "%0 = input : f32[s0, s1]\n%1 = softmax(%0, axis=1) : f32[s0, s1]\noutputs\n",
                "%0 = input : f32[s0, s1]\n%1 = sum(%0) : f32[]\noutputs\n", ""}))
      << r.ir;
  EXPECT_EQ(layout_guards(*r.rt), (Counts{{"TDTYPE==0", 2}, {"TRANK==1", 1}, {"TRANK==2", 1}, {"TDIM==TDIM", 1}}))
      << r.ir;
}

// A matrix product's inner dims are one symbol; its outer dims, of the same
// size by chance, stay two; a dim of size 1 is guarded to stay 1.
TEST(Recorder, MatmulInnerDimsAreOneSymbolAndOnesAreGuarded) {
  Recording r = record(
      "fn f(n) {\n  let a = ones([8, 8])\n  let b = ones([8, 8])\n  let c = ones([8, 1])\n  let s = 0.0\n"
      "  for i in range(n) {\n    s += item(sum(a @ b + c))\n  }\n  return s\n}\nprint(f(10))\n",
      "5760.0\n");
  ASSERT_FALSE(r.ir.empty());
  const std::vector<std::string> ops = graph_ops(*r.rt);
  ASSERT_GE(ops.size(), 2u);
  EXPECT_EQ(ops[0], "%0 = input : f32[s0, s1]\n%1 = input : f32[s1, s3]\n%2 = matmul(%0, %1) : f32[s0, s3]\noutputs\n");
  EXPECT_EQ(ops[1], "%0 = input : f32[s0, s3]\n%1 = input : f32[s0, 1]\n%2 = add(%0, %1) : f32[s0, s3]\noutputs\n");
  EXPECT_EQ(layout_guards(*r.rt), (Counts{{"TDTYPE==0", 3}, {"TRANK==2", 3}, {"TDIM==1", 1}, {"TDIM==TDIM", 2}}))
      << r.ir;
}

// Operations that no kernel computes are typed too: a reduction along the
// leading axis, integer floor division and modulo, a float op on an int
// tensor. Their results need no guard; where the rules make two symbols
// one (c's and q's dims), one guard covers both.
// transpose with constant axes is typed: the product's inner dims are x's
// rows and y's rows, one symbol under one guard; the transposed tensor
// needs no guard of its own.
TEST(Recorder, TransposeIsTypedWithConstantAxes) {
  Recording r = record(
      "fn f(n) {\n  let x = ones([6, 4])\n  let y = ones([6, 3])\n  let s = 0.0\n"
      "  for i in range(n) {\n    s += item(sum(transpose(x, 0, -1) @ y))\n  }\n  return s\n}\nprint(f(10))\n",
      "720.0\n");
  ASSERT_FALSE(r.ir.empty());
  const std::vector<std::string> ops = graph_ops(*r.rt);
  ASSERT_GE(ops.size(), 2u);
  EXPECT_EQ(ops[0], "%0 = input : f32[s0, s1]\n%1 = transpose(%0, dim0=0, dim1=1) : f32[s1, s0]\noutputs\n");
  EXPECT_EQ(ops[1], "%0 = input : f32[s1, s0]\n%1 = input : f32[s0, s3]\n%2 = matmul(%0, %1) : f32[s1, s3]\noutputs\n");
  EXPECT_EQ(layout_guards(*r.rt), (Counts{{"TDTYPE==0", 2}, {"TRANK==2", 2}, {"TDIM==TDIM", 1}})) << r.ir;
}

TEST(Recorder, OperationsNoKernelComputesAreTypedToo) {
  Recording r = record(
      "fn f(n) {\n  let x = ones([6, 4])\n  let k = arange(4)\n  let s = 0.0\n"
      "  for i in range(n) {\n    let c = sum(x, axis=0)\n    let q = (k // 2) % 3\n    s += item(sum(c * q))\n  }\n"
      "  return s\n}\nprint(f(10))\n",
      "120.0\n");
  ASSERT_FALSE(r.ir.empty());
  EXPECT_EQ(graph_ops(*r.rt),
            (std::vector<std::string>{
                "%0 = input : f32[s0, s1]\n%1 = sum(%0, axis=0) : f32[s1]\noutputs\n",
                "%0 = input : i64[s2]\n%1 = input : int\n%2 = floordiv(%0, %1) : i64[s2]\noutputs\n",
                "%0 = input : i64[s2]\n%1 = input : int\n%2 = mod(%0, %1) : i64[s2]\noutputs\n",
                "%0 = input : f32[s1]\n%1 = input : i64[s1]\n%2 = mul(%0, %1) : f32[s1]\noutputs\n",
                "%0 = input : f32[s1]\n%1 = sum(%0) : f32[]\noutputs\n", ""}))
      << r.ir;
  EXPECT_EQ(layout_guards(*r.rt),
            (Counts{{"TDTYPE==0", 1}, {"TDTYPE==" + std::to_string(static_cast<int>(DType::I64)), 1},
                    {"TRANK==1", 1}, {"TRANK==2", 1}, {"TDIM==TDIM", 1}}))
      << r.ir;
}

// Shapes that come from values are typed from the values' IR. zeros' dims
// are its shape list's elements (loaded, the length guarded), which the
// broadcast with x makes one with x's dims (guarded equal: TDIM==LLOAD);
// reshape's -1, slice's axis and arange's length are new symbols read off
// their results (no guard); permute's order, a list that is not a
// constant, is guarded to stay what it was (LLOAD==K); transpose's axis
// from a variable likewise; concat's tensors enter from the list.
TEST(Recorder, ShapesFromValuesAreTypedFromTheirElements) {
  Recording r = record(
      "fn f(n, m) {\n  let x = ones([n, 4])\n  let ax = 1\n  let s = 0.0\n"
      "  for i in range(m) {\n    let z = zeros([n, 4]) + x\n    let p = permute(reshape(z, [4, -1]), [1, 0])\n"
      "    let q = transpose(slice(p, 0, 1, n), 0, ax)\n    let c = concat([q, q], axis=1)\n"
      "    s += item(sum(c)) + item(sum(arange(n)))\n  }\n  return s\n}\nprint(f(3, 10))\n",
      "190.0\n");
  ASSERT_FALSE(r.ir.empty());
  EXPECT_EQ(typed_graph_ops(*r.rt),
            (std::vector<std::string>{
                "%0 = input : shape[s0, s1]\n%1 = zeros(%0, f32) : f32[s0, s1]\noutputs\n",
                "%0 = input : f32[s0, s1]\n%1 = input : f32[s0, s1]\n%2 = add(%0, %1) : f32[s0, s1]\noutputs\n",
                "%0 = input : f32[s0, s1]\n%1 = input : shape[s4, -1]\n%2 = reshape(%0, %1) : f32[s4, s5]\noutputs\n",
                "%0 = input : f32[s4, s5]\n%1 = permute(%0, dim0=1, dim1=0) : f32[s5, s4]\noutputs\n",
                "%0 = input : f32[s5, s4]\n%1 = slice(%0, axis=0) : f32[s6, s4]\noutputs\n",
                "%0 = input : f32[s6, s4]\n%1 = transpose(%0, dim0=0, dim1=1) : f32[s4, s6]\noutputs\n",
                "%0 = input : f32[s7, s8]\n%1 = input : f32[s7, s10]\n%2 = concat(%0, %1, axis=1) : f32[s7, s11]\noutputs\n",
                "%0 = input : f32[s7, s11]\n%1 = sum(%0) : f32[]\noutputs\n",
                "%0 = input : int\n%1 = arange(%0) : i64[s12]\noutputs\n",
                "%0 = input : i64[s12]\n%1 = sum(%0) : i64[]\noutputs\n"}))
      << r.ir;
  // zeros', reshape's, permute's and concat's lists are 2 long; permute's
  // elements pinned; x's dims are zeros' elements; concat's two tensors
  // (entering: dtype, rank) share their rows; x enters too.
  EXPECT_EQ(layout_guards(*r.rt), (Counts{{"LLEN==2", 4}, {"LLOAD==0", 1}, {"LLOAD==1", 1}, {"TDIM==LLOAD", 2},
                                          {"TDIM==TDIM", 1}, {"TDTYPE==0", 3}, {"TRANK==2", 3}}))
      << r.ir;
  // The text form reads the shapes and the new symbols back.
  const std::string text = jit::print_ir(r.rt->tracing()->traces().at(0)->ir);
  EXPECT_EQ(jit::print_ir(jit::parse_ir(text)), text);
}

// Attributes from variables (axis=, keepdim=) are bound to the values
// recorded, each guarded to keep it (SLOAD==K); arithmetic on bool tensors
// is typed by the interpreter's dtype rule.
TEST(Recorder, AttributesFromVariablesArePinnedAndBoolArithmeticIsTyped) {
  Recording r = record(
      "fn f(n) {\n  let x = ones([4, 6])\n  let m = arange(6) > 2\n  let ax = 1\n  let kd = true\n  let s = 0.0\n"
      "  for i in range(n) {\n    let c = sum(x, axis=ax, keepdim=kd)\n    s += item(sum(c)) + item(sum(m * m))\n  }\n"
      "  return s\n}\nprint(f(10))\n",
      "270.0\n");
  ASSERT_FALSE(r.ir.empty());
  EXPECT_EQ(typed_graph_ops(*r.rt), (std::vector<std::string>{
                       "%0 = input : f32[s0, s1]\n%1 = sum(%0, axis=1, keepdim) : f32[s0, 1]\noutputs\n",
                       "%0 = input : f32[s0, 1]\n%1 = sum(%0) : f32[]\noutputs\n",
                       "%0 = input : bool[s2]\n%1 = mul(%0, %0) : bool[s2]\noutputs\n",
                       "%0 = input : bool[s2]\n%1 = sum(%0) : i64[]\noutputs\n"}))
      << r.ir;
  int pinned = 0;
  const jit::TraceIR& ir = r.rt->tracing()->traces().at(0)->ir;
  for (const jit::IRIns& in : ir.instructions())
    if (in.op == jit::IROp::GUARDT && ir[in.op1].op == jit::IROp::EQ && ir[ir[in.op1].op1].op == jit::IROp::SLOAD &&
        (ir[ir[in.op1].op2].op == jit::IROp::KINT || ir[ir[in.op1].op2].op == jit::IROp::KBOOL))
      ++pinned;
  EXPECT_EQ(pinned, 2) << r.ir;
}

// tensor() of a (nested) list of numbers: a scalar operand per number, each
// one's type guarded (LLOAD) and each list's length (LLEN); each dim is a
// new symbol read off the result, a length of 1 is 1.
TEST(Recorder, ListLiteralsAreTypedByTheirElements) {
  Recording r = record(
      "fn f(n) {\n  let s = 0.0\n  let x = 2.5\n  for i in range(n) {\n"
      "    s += item(sum(tensor([i * 1.0, x, 3]) + tensor([i > 3]))) + item(sum(tensor([[1, 2], [3, i]])))\n  }\n"
      "  return s\n}\nprint(f(10))\n",
      "223.0\n");
  ASSERT_FALSE(r.ir.empty());
  EXPECT_EQ(typed_graph_ops(*r.rt), (std::vector<std::string>{
                       "%0 = input : float\n%1 = input : float\n%2 = input : int\n%3 = tensor(%0, %1, %2, dim0=3) : f32[s0]\noutputs\n",
                       "%0 = input : bool\n%1 = tensor(%0, dim0=1) : bool[1]\noutputs\n",
                       "%0 = input : f32[s0]\n%1 = input : bool[1]\n%2 = add(%0, %1) : f32[s0]\noutputs\n",
                       "%0 = input : f32[s0]\n%1 = sum(%0) : f32[]\noutputs\n",
                       "%0 = input : int\n%1 = input : int\n%2 = input : int\n%3 = input : int\n"
                       "%4 = tensor(%0, %1, %2, %3, dim0=2, dim1=2) : i64[s1, s2]\noutputs\n",
                       "%0 = input : i64[s1, s2]\n%1 = sum(%0) : i64[]\noutputs\n"}))
      << r.ir;
  EXPECT_EQ(layout_guards(*r.rt), (Counts{{"LLEN==1", 1}, {"LLEN==2", 3}, {"LLEN==3", 1}})) << r.ir;
  const std::string text = jit::print_ir(r.rt->tracing()->traces().at(0)->ir);
  EXPECT_EQ(jit::print_ir(jit::parse_ir(text)), text);
}

}  // namespace
}  // namespace tessera
