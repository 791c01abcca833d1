// The text form of trace IR: format, exact round trips, and errors.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracer/call_fields.h"
#include "tracer/constant_description.h"
#include "tracer/ir_operands.h"
#include "tracer/trace_ir.h"
#include "vm/graph/region.h"
#include "vm/bytecode/bytecode.h"

namespace tessera::jit {
namespace {

// Instructions, constant pool, snapshots and calls all equal.
void expect_same_trace(const TraceIR& a, const TraceIR& b) {
  ASSERT_EQ(a.size(), b.size());
  for (IRRef r = 0; r < a.size(); ++r) {
    EXPECT_EQ(a[r].op, b[r].op) << r;
    EXPECT_EQ(a[r].type, b[r].type) << r;
    EXPECT_EQ(a[r].snap, b[r].snap) << r;
    EXPECT_EQ(a[r].op1, b[r].op1) << r;
    EXPECT_EQ(a[r].op2, b[r].op2) << r;
  }
  EXPECT_EQ(a.const_pool(), b.const_pool());
  ASSERT_EQ(a.snapshots().size(), b.snapshots().size());
  for (size_t k = 0; k < a.snapshots().size(); ++k) {
    const Snapshot &x = a.snapshots()[k], &y = b.snapshots()[k];
    EXPECT_EQ(x.ir_ref, y.ir_ref);
    EXPECT_EQ(x.pc, y.pc);
    ASSERT_EQ(x.frames.size(), y.frames.size());
    for (size_t f = 0; f < x.frames.size(); ++f) {
      EXPECT_EQ(x.frames[f].proto, y.frames[f].proto);
      EXPECT_EQ(x.frames[f].base, y.frames[f].base);
      EXPECT_EQ(x.frames[f].call_pc, y.frames[f].call_pc);
    }
    ASSERT_EQ(x.entries.size(), y.entries.size());
    for (size_t e = 0; e < x.entries.size(); ++e) {
      EXPECT_EQ(x.entries[e].slot, y.entries[e].slot);
      EXPECT_EQ(x.entries[e].ref, y.entries[e].ref);
    }
  }
  ASSERT_EQ(a.calls().size(), b.calls().size());
  for (size_t k = 0; k < a.calls().size(); ++k) {
    EXPECT_EQ(a.calls()[k].kind(), b.calls()[k].kind());
    const CallFields fa = call_fields(a.calls()[k]), fb = call_fields(b.calls()[k]);
    EXPECT_EQ(fa.sub, fb.sub);
    EXPECT_EQ(fa.ptr, fb.ptr);
    EXPECT_EQ(fa.aux, fb.aux);
    EXPECT_EQ(fa.kw, fb.kw);
    EXPECT_EQ(a.calls()[k].name, b.calls()[k].name);
    EXPECT_EQ(a.calls()[k].dest_slot, b.calls()[k].dest_slot);
  }
  EXPECT_EQ(a.virtual_tensors(), b.virtual_tensors());
}

TEST(IRText, InstructionLineFormat) {
  TraceIR ir;
  IRRef i = ir.emit(IROp::SLOAD, IRType::Int, 0, 0, 0);
  IRRef one = ir.kint(1);
  IRRef sum = ir.emit(IROp::ADD, IRType::Int, i, one);
  IRRef half = ir.kfloat(2.5);
  IRRef lt = ir.emit(IROp::LT, IRType::Bool, sum, i);
  ir.emit(IROp::GUARDT, IRType::None, lt, 0, 0);
  ir.knil();
  ir.kbool(false);
  (void)half;
  ir.snapshots().push_back(Snapshot{});
  EXPECT_EQ(print_ir(ir),
            "0000 >  int  SLOAD  0  0  #0\n"
            "0001    int  KINT   1\n"
            "0002    int  ADD    0000  0001\n"
            "0003    flt  KFLOAT 2.5\n"
            "0004    bool LT     0002  0000\n"
            "0005 >  none GUARDT 0004  #0\n"
            "0006    nil  KNIL\n"
            "0007    bool KBOOL  false\n"
            "SNAP #0 ir=0000 pc=0 frames=[] []\n");
}

// One instruction of every opcode, with plausible operands.
TEST(IRText, EveryOpcodePrintsAndParses) {
  TraceIR ir;
  static int obj;
  ir.snapshots().push_back(Snapshot{});
  ir.calls().push_back(CallTarget{call::Arith{BinOp::Div}, "arith.+"});
  ir.virtual_tensors().push_back(VirtualTensor{DType::I64, {1}});  // VNEWTENSOR's one element: `a`
  IRRef a = ir.emit(IROp::SLOAD, IRType::Int, 0, 0, 0);
  IRRef b = ir.emit(IROp::SLOAD, IRType::Int, 1, 0, 0);
  for (int k = 0; k < kNumIROps; ++k) {
    IROp op = static_cast<IROp>(k);
    const IROpInfo& info = ir_op_info(op);
    switch (op) {
      case IROp::KNIL: ir.knil(); continue;
      case IROp::KBOOL: ir.kbool(true); continue;
      case IROp::KINT: ir.kint(-42); continue;
      case IROp::KFLOAT: ir.kfloat(0.25); continue;
      case IROp::KOBJ: ir.kobj(&obj, IRType::Tensor); continue;
      default: break;
    }
    auto operand = [&](OperandKind kind, IRRef ref) -> uint32_t {
      return kind == OperandKind::ref ? ref : kind == OperandKind::lit ? 7 : 0;
    };
    uint32_t op1 = operand(info.op1, a), op2 = operand(info.op2, b);
    if (op == IROp::CALL || op == IROp::VNEWTENSOR) op2 = 0;  // call #0, virtual tensor #0
    uint16_t snap = ir_is_guard(op) || op == IROp::CALL ? 0 : kNoSnap;
    ir.emit(op, IRType::Int, op1, op2, snap);
  }
  std::string text = print_ir(ir);
  for (int k = 0; k < kNumIROps; ++k) {
    std::string name = std::string(" ") + ir_op_info(static_cast<IROp>(k)).name;
    bool found = text.find(name + " ") != std::string::npos || text.find(name + "\n") != std::string::npos;
    EXPECT_TRUE(found) << name << "\n" << text;
  }
  TraceIR back = parse_ir(text);
  expect_same_trace(ir, back);
  EXPECT_EQ(print_ir(back), text);
}

// A loop over a list with an inlined call, as the recorder would build it:
//   fn scale(x) { return x * 2.0 }
//   for i in range(n) { s = s + max(scale(xs[i]), s) }
TEST(IRText, RealisticLoopTraceRoundTrips) {
  FunctionProto main_proto, scale_proto;
  main_proto.name = "<main>";
  scale_proto.name = "scale";
  static int max_builtin;  // stands in for a BuiltinDef

  TraceIR ir;
  ir.calls().push_back(CallTarget{call::Builtin{reinterpret_cast<const BuiltinDef*>(&max_builtin)}, "max"});
  IRRef i = ir.emit(IROp::SLOAD, IRType::Int, 0, 0, 0);
  IRRef n = ir.emit(IROp::SLOAD, IRType::Int, 1, 0, 0);
  IRRef xs = ir.emit(IROp::SLOAD, IRType::List, 2, 0, 0);
  IRRef s = ir.emit(IROp::SLOAD, IRType::Float, 3, 0, 0);
  IRRef len = ir.emit(IROp::LLEN, IRType::Int, xs);
  ir.emit(IROp::LOOP, IRType::None);
  IRRef inb = ir.emit(IROp::ULT, IRType::Bool, i, len);
  ir.emit(IROp::GUARDT, IRType::None, inb, 0, 1);
  IRRef x = ir.emit(IROp::LLOAD, IRType::Float, xs, i, 1);
  IRRef two = ir.kfloat(2.0);
  IRRef scaled = ir.emit(IROp::FMUL, IRType::Float, x, two);
  IRRef args = ir.emit(IROp::CARG, IRType::None, scaled, s);
  IRRef m = ir.emit(IROp::CALL, IRType::Float, args, 0, 1);
  IRRef s2 = ir.emit(IROp::FADD, IRType::Float, s, m);
  IRRef one = ir.kint(1);
  IRRef i2 = ir.emit(IROp::ADD, IRType::Int, i, one);
  IRRef more = ir.emit(IROp::LT, IRType::Bool, i2, n);
  ir.emit(IROp::GUARDT, IRType::None, more, 0, 2);
  ir.emit(IROp::PHI, IRType::Int, i, i2);
  ir.emit(IROp::PHI, IRType::Float, s, s2);
  ir.snapshots().push_back(Snapshot{0, 4, {}, {}});
  ir.snapshots().push_back(Snapshot{7, 2, {SnapshotFrame{&scale_proto, 5, 9}}, {{3, s}, {5, x}, {6, two}}});
  ir.snapshots().push_back(Snapshot{17, 12, {}, {{0, i2}, {3, s2}}});

  const std::string expected =
      "0000 >  int  SLOAD  0  0  #0\n"
      "0001 >  int  SLOAD  1  0  #0\n"
      "0002 >  list SLOAD  2  0  #0\n"
      "0003 >  flt  SLOAD  3  0  #0\n"
      "0004    int  LLEN   0002\n"
      "0005    none LOOP\n"
      "0006    bool ULT    0000  0004\n"
      "0007 >  none GUARDT 0006  #1\n"
      "0008 >  flt  LLOAD  0002  0000  #1\n"
      "0009    flt  KFLOAT 2.0\n"
      "0010    flt  FMUL   0008  0009\n"
      "0011    none CARG   0010  0003\n"
      "0012    flt  CALL   0011  0  #1\n"
      "0013    flt  FADD   0003  0012\n"
      "0014    int  KINT   1\n"
      "0015    int  ADD    0000  0014\n"
      "0016    bool LT     0015  0001\n"
      "0017 >  none GUARDT 0016  #2\n"
      "0018    int  PHI    0000  0015\n"
      "0019    flt  PHI    0003  0013\n"
      "SNAP #0 ir=0000 pc=4 frames=[] []\n"
      "SNAP #1 ir=0007 pc=2 frames=[scale@5/9] [3=0003 5=0008 6=0009]\n"
      "SNAP #2 ir=0017 pc=12 frames=[] [0=0015 3=0013]\n"
      "CALL #0 builtin 0 max " +
      std::string(print_ir(ir).substr(print_ir(ir).rfind(" 0x") + 1));
  std::string text = print_ir(ir);
  EXPECT_EQ(text, expected);
  EXPECT_EQ(ir.loop_ref(), 5u);

  ProtoResolver resolve = [&](std::string_view name) -> FunctionProto* {
    if (name == "scale") return &scale_proto;
    if (name == "<main>") return &main_proto;
    return nullptr;
  };
  TraceIR back = parse_ir(text, resolve);
  expect_same_trace(ir, back);
  EXPECT_EQ(print_ir(back), text);
  EXPECT_EQ(back.calls()[0].as<call::Builtin>().def, reinterpret_cast<const BuiltinDef*>(&max_builtin));
  EXPECT_EQ(back.loop_ref(), 5u);

  // Without a resolver the frame keeps its name but no proto.
  TraceIR unresolved = parse_ir(text);
  EXPECT_EQ(unresolved.snapshots()[1].frames[0].proto, nullptr);
  EXPECT_EQ(unresolved.snapshots()[1].frames[0].name, "scale");
  EXPECT_EQ(print_ir(unresolved), text);
}

TEST(IRText, FloatConstantsRoundTripBitExactly) {
  using L = std::numeric_limits<double>;
  const std::vector<double> values = {
      0.0,           -0.0,           1.0,          -1.0,          0.1,          1.0 / 3.0,
      1e300,         -1e300,         1e-300,       1e21,          123456789.0,  L::max(),
      L::lowest(),   L::min(),       L::denorm_min(), -L::denorm_min(), 2.2250738585072009e-308,
      L::infinity(), -L::infinity(), L::quiet_NaN(), -L::quiet_NaN(),
      std::bit_cast<double>(uint64_t{0x7ff0000000000001}),  // signalling NaN
      std::bit_cast<double>(uint64_t{0x7ff8dead0000beef}),  // NaN with payload
  };
  TraceIR ir;
  std::vector<IRRef> refs;
  for (double v : values) refs.push_back(ir.kfloat(v));
  std::string text = print_ir(ir);
  TraceIR back = parse_ir(text);
  ASSERT_EQ(back.size(), ir.size());
  for (size_t k = 0; k < values.size(); ++k)
    EXPECT_EQ(std::bit_cast<uint64_t>(back.const_float(refs[k])), std::bit_cast<uint64_t>(values[k]))
        << k << ": " << values[k];
  EXPECT_EQ(print_ir(back), text);

  auto shown = [](double v) {
    TraceIR one;
    one.kfloat(v);
    std::string line = print_ir(one);
    return line.substr(line.rfind(' ') + 1, line.size() - line.rfind(' ') - 2);
  };
  EXPECT_EQ(shown(-0.0), "-0.0");
  EXPECT_EQ(shown(2.0), "2.0");
  EXPECT_EQ(shown(0.1), "0.1");
  EXPECT_EQ(shown(1e300), "1e+300");
  EXPECT_EQ(shown(L::infinity()), "inf");
  EXPECT_EQ(shown(-L::infinity()), "-inf");
  EXPECT_EQ(shown(L::quiet_NaN()), "nan");
  EXPECT_EQ(shown(L::denorm_min()), "5e-324");
  EXPECT_EQ(shown(std::bit_cast<double>(uint64_t{0x7ff8dead0000beef})), "nan:0x7ff8dead0000beef");
}

// The float of an int constant (a folded CONV) is a constant of its own,
// marked `int`, since the interpreter holds an int there.
TEST(IRText, FloatsOfIntConstantsRoundTrip) {
  TraceIR ir;
  const IRRef three = ir.kfloat(3.0);
  const IRRef three_int = ir.kfloat(3.0, true);
  const IRRef big = ir.kfloat(static_cast<double>(std::numeric_limits<int64_t>::max()), true);
  EXPECT_NE(three, three_int);
  EXPECT_EQ(three_int, ir.kfloat(3.0, true));
  EXPECT_FALSE(ir.is_converted_int(three));
  EXPECT_TRUE(ir.is_converted_int(three_int));
  const std::string text = print_ir(ir);
  EXPECT_NE(text.find("flt  KFLOAT 3.0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("flt  KFLOAT 3.0 int\n"), std::string::npos) << text;
  TraceIR back = parse_ir(text);
  ASSERT_EQ(back.size(), ir.size());
  EXPECT_TRUE(back.is_converted_int(three_int));
  EXPECT_TRUE(back.is_converted_int(big));
  EXPECT_FALSE(back.is_converted_int(three));
  EXPECT_EQ(print_ir(back), text);
  EXPECT_THROW(parse_ir("0000    flt  KFLOAT 2.5 int\n"), std::invalid_argument);
  EXPECT_THROW(parse_ir("0000    flt  KFLOAT inf int\n"), std::invalid_argument);
}

// kMixedRow on an LLOAD prints as `mixed`, parses back, and survives a
// rebuild; other opcodes do not take the word.
TEST(IRText, MixedRowLoadsRoundTrip) {
  const std::string text =
      "0000 >  list SLOAD  0  0  #0\n"
      "0001 >  int  SLOAD  1  0  #0\n"
      "0002 >  flt  LLOAD  0000  0001 mixed  #0\n"
      "0003 >  flt  LLOAD  0000  0001  #0\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n";
  TraceIR ir = parse_ir(text);
  EXPECT_EQ(ir[2].flags, kMixedRow);
  EXPECT_EQ(ir[3].flags, 0);
  EXPECT_EQ(print_ir(ir), text);
  TraceIR copy;
  for (IRRef r = 0; r < ir.size(); ++r) emit_renumbered(copy, ir[r], [](IRRef x) { return x; });
  EXPECT_EQ(copy[2].flags, kMixedRow);
  EXPECT_THROW(parse_ir("0000 >  int  SLOAD  1  0 mixed  #0\nSNAP #0 ir=0000 pc=0 frames=[] []\n"),
               std::invalid_argument);
}

// A peeled loop's header snapshot prints as `HEADER #n` and parses back;
// one naming a snapshot that does not exist is an error.
TEST(IRText, HeaderSnapshotRoundTrips) {
  const std::string text =
      "0000 >  int  SLOAD  1  0  #0\n"
      "0001    none LOOP\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0001 pc=0 frames=[] [1=0000]\n"
      "HEADER #1\n";
  TraceIR ir = parse_ir(text);
  EXPECT_EQ(ir.header_snapshot(), 1);
  EXPECT_EQ(print_ir(ir), text);
  EXPECT_EQ(parse_ir("0000 >  int  SLOAD  1  0  #0\nSNAP #0 ir=0000 pc=0 frames=[] []\n").header_snapshot(), kNoSnap);
  EXPECT_THROW(parse_ir("0000 >  int  SLOAD  1  0  #0\nSNAP #0 ir=0000 pc=0 frames=[] []\nHEADER #4\n"),
               std::invalid_argument);
  EXPECT_THROW(parse_ir("0000 >  int  SLOAD  1  0  #0\nSNAP #0 ir=0000 pc=0 frames=[] []\nHEADER 1\n"),
               std::invalid_argument);
}

TEST(IRText, IntAndPointerConstantsRoundTrip) {
  TraceIR ir;
  for (int64_t v : {int64_t{0}, int64_t{-1}, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()})
    ir.kint(v);
  ir.kobj(reinterpret_cast<const void*>(uintptr_t{0xffffffffffffull}), IRType::Str);
  ir.kobj(nullptr, IRType::Func);
  const IRRef f16 = ir.kdtype(DType::F16);
  EXPECT_NE(f16, ir.kint(static_cast<int64_t>(DType::F16)));  // a dtype is not the int of its number
  std::string text = print_ir(ir);
  EXPECT_NE(text.find("KINT   -9223372036854775808\n"), std::string::npos) << text;
  EXPECT_NE(text.find("str  KOBJ   0xffffffffffff\n"), std::string::npos) << text;
  EXPECT_NE(text.find("func KOBJ   0x0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("dtyp KINT   " + std::to_string(static_cast<int>(DType::F16)) + "\n"), std::string::npos) << text;
  TraceIR back = parse_ir(text);
  expect_same_trace(ir, back);
  EXPECT_EQ(print_ir(back), text);
}

TEST(IRText, CallTargetsAndOddNamesRoundTrip) {
  TraceIR ir;
  ir.calls().push_back(CallTarget{call::Builtin{}, "sqrt"});
  ir.calls().push_back(CallTarget{call::Arith{BinOp::Mul}, "arith.-"});
  ir.calls().push_back(CallTarget{call::Compare{CmpOp::Gt}, "cmp.<="});
  ir.calls().push_back(CallTarget{call::IndexGet{0}, "", 12});
  ir.calls().push_back(CallTarget{call::IndexSet{255}, "-weird name@[x]/%#"});
  CallTarget seen{call::Arith{BinOp::Mul}, "arith*", 4};
  seen.seen = {std::nullopt, VirtualTensor{DType::F32, {2, 3}}, VirtualTensor{DType::I64, {}}};
  ir.calls().push_back(seen);
  Snapshot s;
  s.frames.push_back(SnapshotFrame{nullptr, 0, 1, "<lambda>"});
  s.frames.push_back(SnapshotFrame{nullptr, 4, 7, ""});
  s.frames.push_back(SnapshotFrame{nullptr, 9, 2, "a b"});
  ir.snapshots().push_back(s);
  std::string text = print_ir(ir);
  EXPECT_NE(text.find("CALL #1 arith 2 arith.- 0x0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("CALL #3 indexget 0 - 0x0 dest=12\n"), std::string::npos) << text;
  EXPECT_NE(text.find("CALL #5 arith 2 arith* 0x0 dest=4 seen=1:f32:2x3,2:i64:\n"), std::string::npos) << text;
  TraceIR back = parse_ir(text);
  expect_same_trace(ir, back);
  for (size_t f = 0; f < s.frames.size(); ++f) EXPECT_EQ(back.snapshots()[0].frames[f].name, s.frames[f].name);
  EXPECT_EQ(back.calls()[5].seen, seen.seen);
  EXPECT_EQ(print_ir(back), text);
}

// A recorded tensor operation carries its Graph IR operation (trace_shapes.h)
// as a one-op region after its CALL line, like a kernel call's region; its
// symbols are the trace's, so two calls name one dim alike.
TEST(IRText, RecordedGraphOperationsRoundTrip) {
  const std::string text =
      "0000 >  tens SLOAD  1  0  #0\n"
      "0001 >  tens SLOAD  2  0  #0\n"
      "0002    none CARG   0000  0001\n"
      "0003    none CALL   0002  0  #0\n"
      "0004 >  tens SLOAD  3  1  #0\n"
      "0005    none CALL   0004  1  #0\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "CALL #0 arith 0 arith+ 0x0 dest=3 seen=0:f32:8x33,1:f32:33\n"
      "  | %0 = input : f32[s0, s1]\n"
      "  | %1 = input : f32[s1]\n"
      "  | %2 = add(%0, %1) : f32[s0, s1]\n"
      "  | outputs\n"
      "CALL #1 builtinkw 1 softmax 0x0 dest=4 kw=axis seen=0:f32:8x33\n"
      "  | %0 = input : f32[s0, s1]\n"
      "  | %1 = softmax(%0, axis=1) : f32[s0, s1]\n"
      "  | outputs\n";
  TraceIR ir = parse_ir(text);
  ASSERT_EQ(ir.calls().size(), 2u);
  ASSERT_TRUE(ir.calls()[0].graph && ir.calls()[1].graph);
  EXPECT_FALSE(ir.calls()[0].kernel_region());  // not a kernel call
  EXPECT_EQ(ir.calls()[0].graph->ops.at(0).op, OpId::Add);
  EXPECT_EQ(ir.calls()[1].graph->ops.at(0).attrs.axis, 1);
  EXPECT_EQ(ir.calls()[1].graph->inputs.at(0), ir.calls()[0].graph->ops.at(0).type);
  EXPECT_EQ(print_ir(ir), text);
  // A call's region is one operation; '|' lines follow a CALL line.
  EXPECT_THROW(parse_ir("CALL #0 arith 0 arith+ 0x0 dest=3 seen=0:f32:8\n"
                        "  | %0 = input : f32[s0]\n  | %1 = neg(%0) : f32[s0]\n  | %2 = neg(%1) : f32[s0]\n"),
               std::invalid_argument);
  EXPECT_THROW(parse_ir("0000 >  tens SLOAD  1  0  #0\n  | %0 = input : f32[s0]\n"), std::invalid_argument);
}

TEST(IRText, VirtualTensorsRoundTrip) {
  const std::string text =
      "0000    flt  KFLOAT 1.5\n"
      "0001    int  KINT   3\n"
      "0002    none CARG   0000  0000\n"
      "0003    tens VNEWTENSOR 0002  0\n"
      "0004    tens VNEWTENSOR 0001  1\n"
      "VTENSOR #0 f32 [2]\n"
      "VTENSOR #1 i64 []\n";
  TraceIR ir = parse_ir(text);
  ASSERT_EQ(ir.virtual_tensors().size(), 2u);
  EXPECT_EQ(ir.virtual_tensors()[0], (VirtualTensor{DType::F32, {2}}));
  EXPECT_EQ(ir.virtual_tensors()[1], (VirtualTensor{DType::I64, {}}));
  EXPECT_EQ(ir.virtual_tensors()[1].numel(), 1);
  EXPECT_EQ(print_ir(ir), text);
}

TEST(IRText, CommentsAndBlankLinesAreIgnored) {
  std::string text =
      "---- TRACE 1 IR\n"
      "\n"
      "0000 >  int  SLOAD  0  0  #0   -- i\n"
      "   0001    int  KINT   -5\n"
      "0002    int  ADD    0000  0001\r\n"
      "SNAP #0 ir=0000 pc=1 frames=[] []  -- entry\n";
  TraceIR ir = parse_ir(text);
  ASSERT_EQ(ir.size(), 3u);
  EXPECT_EQ(ir.const_int(1), -5);
  EXPECT_EQ(print_ir(ir),
            "0000 >  int  SLOAD  0  0  #0\n"
            "0001    int  KINT   -5\n"
            "0002    int  ADD    0000  0001\n"
            "SNAP #0 ir=0000 pc=1 frames=[] []\n");
}

// One call target of each kind: each prints with its own fields and reads
// back as the same kind with the same fields.
TEST(IRText, EveryCallKindRoundTrips) {
  const std::string text =
      "CALL #0 builtin 0 sqrt 0x1000\n"
      "CALL #1 arith 6 arith** 0x0 dest=2\n"
      "CALL #2 compare 5 compare>= 0x0\n"
      "CALL #3 indexget 2 index_get 0x0 dest=3\n"
      "CALL #4 indexset 1 index_set 0x0\n"
      "CALL #5 builtinkw 2 zeros 0x2000 dest=4 aux=0x3000 kw=dtype,device\n"
      "CALL #6 newlist 0 newlist 0x0 dest=5\n"
      "CALL #7 negate 0 neg 0x0 dest=6 seen=0:f32:2\n"
      "CALL #8 listext 0 listext 0x0\n"
      "CALL #9 kernel 0 kernel 0x0 dest=7\n"
      "  | %0 = input : f32[s0]\n"
      "  | %1 = tanh(%0) : f32[s0]\n"
      "  | outputs %1\n";
  const TraceIR ir = parse_ir(text);
  ASSERT_EQ(ir.calls().size(), static_cast<size_t>(CallTarget::kNumKinds));
  for (int k = 0; k < CallTarget::kNumKinds; ++k) EXPECT_EQ(static_cast<int>(ir.calls()[k].kind()), k);
  EXPECT_EQ(ir.calls()[1].as<call::Arith>().op, BinOp::Pow);
  EXPECT_EQ(ir.calls()[2].as<call::Compare>().op, CmpOp::Ge);
  EXPECT_EQ(ir.calls()[3].as<call::IndexGet>().nidx, 2);
  EXPECT_EQ(ir.calls()[4].as<call::IndexSet>().nidx, 1);
  const call::BuiltinKw& kw = ir.calls()[5].as<call::BuiltinKw>();
  EXPECT_EQ(kw.def, reinterpret_cast<const BuiltinDef*>(0x2000));
  EXPECT_EQ(kw.nkw, 2);
  EXPECT_EQ(kw.names, reinterpret_cast<const void*>(0x3000));
  EXPECT_EQ(kw.kw, (std::vector<std::string>{"dtype", "device"}));
  ASSERT_NE(ir.calls()[9].kernel_region(), nullptr);
  EXPECT_EQ(ir.calls()[9].kernel_region()->ops.size(), 1u);
  EXPECT_THROW((void)ir.calls()[0].as<call::Kernel>(), std::logic_error);
  EXPECT_EQ(print_ir(ir), text);
  expect_same_trace(ir, parse_ir(print_ir(ir)));
}

// A field the kind does not have is an error, not dropped.
TEST(IRText, CallFieldOfAnotherKindIsRejected) {
  for (const char* line : {"CALL #0 newlist 3 newlist 0x0\n", "CALL #0 arith 0 arith+ 0x1000\n",
                           "CALL #0 builtin 0 max 0x1000 aux=0x2000\n", "CALL #0 negate 0 neg 0x0 kw=axis\n"})
    EXPECT_THROW(parse_ir(line), std::invalid_argument) << line;
}

TEST(IRText, MissingCallArgumentsPrintAsNone) {
  TraceIR ir;
  ir.calls().push_back(CallTarget{call::Builtin{}, "time"});
  ir.emit(IROp::CALL, IRType::Float, kNoRef, 0);
  std::string text = print_ir(ir);
  EXPECT_EQ(text.substr(0, text.find('\n')), "0000    flt  CALL   none  0");
  EXPECT_EQ(parse_ir(text)[0].op1, kNoRef);
}

struct BadCase {
  const char* text;
  int line;
  const char* what;  // a fragment of the message
};

TEST(IRText, MalformedInputReportsTheLine) {
  const std::string k = "0000    int  KINT   1\n";
  const std::vector<BadCase> cases = {
      {"0000    int  FOO    1\n", 1, "unknown opcode 'FOO'"},
      {"0000    intx KINT   1\n", 1, "unknown type"},
      {"-- c\n\n0000    int  KINT   x\n", 3, "bad operand 'x'"},
      {"0001    int  KINT   1\n", 1, "expected 0000"},
      {"0000    int  SLOAD  0  0\n", 1, "lacks '>'"},
      {"0000 >  int  LLEN   0000\n", 1, "not a guard"},
      {"0000    int  KINT   1  2\n", 1, "unexpected '2'"},
      {"0000    int  KINT   1\n0001    int  ADD    0000\n", 2, "missing operand"},
      {"0000    int  KINT   1\n0001    int  ADD    0000  0002\n0002    int  KINT 2\n", 2, "not before"},
      {"0000    int  KINT   1\n0001    int  ADD    0000  0009\n", 2, "does not exist"},
      {"0000    int  KINT   1\n0001    int  KINT   1\n", 2, "duplicate constant"},
      {"0000    flt  KINT   1\n", 1, "must have type int"},
      {"0000    flt  KFLOAT 1.2.3\n", 1, "bad operand"},
      {"0000    flt  KFLOAT nan:0x3ff0000000000000\n", 1, "bad operand"},
      {"0000    int  KOBJ   0x10\n", 1, "KOBJ cannot have type int"},
      {"0000    str  KOBJ   16\n", 1, "bad operand"},
      {"0000    bool KBOOL  2\n", 1, "bad operand"},
      {"0000    int  KINT   1  #0\n", 1, "constants take no snapshot"},
      {"0000 >  int  SLOAD  0  0  #1\nSNAP #0 ir=0000 pc=0 frames=[] []\n", 1, "snapshot #1 does not exist"},
      {"0000    int  CALL   none  0\n", 1, "call #0 does not exist"},
      {"SNAP #1 ir=0000 pc=0 frames=[] []\n", 1, "out of order"},
      {"SNAP #0 ir=0000 pc=x frames=[] []\n", 1, "expected pc"},
      {"SNAP #0 ir=0000 pc=0 frames=[f@1] []\n", 1, "expected '/'"},
      {"SNAP #0 ir=0000 pc=0 frames=[] [1=0000 0=0000]\n", 1, "sorted"},
      {"SNAP #0 ir=0000 pc=0 frames=[] [0=0000]\n", 1, "does not exist"},
      {"SNAP #0 ir=0000 pc=0 frames=[] [] x\n", 1, "unexpected text"},
      {"SNAP #0 ir=0000 pc=0 frames=[] [\n", 1, "expected"},
      {"CALL #0 builtin 0 sqrt\n", 1, "expected 'CALL #N"},
      {"CALL #0 builtin 0 sqrt 0x0 dest=-1\n", 1, "bad call destination"},
      {"CALL #0 builtin 0 sqrt 0x0 slot=1\n", 1, "unexpected 'slot=1' in CALL line"},
      {"CALL #0 builtin 0 sqrt 0x0 dest=x\n", 1, "bad call destination"},
      {"CALL #0 builtinkw 1 zeros 0x0 aux=zz\n", 1, "bad call aux pointer"},
      {"CALL #0 magic 0 sqrt 0x0\n", 1, "unknown call kind"},
      {"CALL #0 arith 300 sqrt 0x0\n", 1, "sub-code"},
      {"CALL #1 arith 0 sqrt 0x0\n", 1, "out of order"},
      {"CALL #0 arith 0 sq%zzrt 0x0\n", 1, "bad escape"},
      {"hello\n", 1, "expected an instruction reference"},
      {"CALL #0 arith 2 a 0x0 seen=0:f32\n", 1, "bad seen="},
      {"CALL #0 arith 2 a 0x0 seen=1:f32:2,0:f32:2\n", 1, "bad seen="},
      {"CALL #0 arith 2 a 0x0 seen=0:f64:2\n", 1, "bad seen="},
      {"CALL #0 arith 2 a 0x0 seen=0:f32:2y3\n", 1, "bad seen="},
      {"VTENSOR #1 f32 [2]\n", 1, "out of order"},
      {"VTENSOR #0 f64 [2]\n", 1, "unknown dtype"},
      {"VTENSOR #0 f32 2\n", 1, "expected 'VTENSOR"},
      {"VTENSOR #0 f32 [2, x]\n", 1, "bad dimension"},
      {"VTENSOR #0 f32 [-1]\n", 1, "bad dimension"},
      {"VTENSOR #0 f32 [1048576, 1048576]\n", 1, "too large"},
      {"0000    int  KINT   1\n0001    tens VNEWTENSOR 0000  0\n", 2, "virtual tensor #0 does not exist"},
      {"0000    int  KINT   1\n0001    tens VNEWTENSOR 0000  0\nVTENSOR #0 i64 [2]\n", 2, "element count"},
  };
  for (const BadCase& c : cases) {
    std::string want = "line " + std::to_string(c.line) + ": ";
    try {
      parse_ir(c.text);
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const std::invalid_argument& e) {
      std::string msg = e.what();
      EXPECT_EQ(msg.rfind(want, 0), 0u) << c.text << " -> " << msg;
      EXPECT_NE(msg.find(c.what), std::string::npos) << c.text << " -> " << msg;
    }
  }
  (void)k;
}

// Cutting a valid dump anywhere, or corrupting one character, gives either a
// trace or a clean error: never a crash or another exception.
TEST(IRText, DamagedTextFailsCleanly) {
  const std::string text =
      "0000 >  int  SLOAD  0  0  #0\n"
      "0001 >  list SLOAD  1  0  #0\n"
      "0002    int  LLEN   0001\n"
      "0003    none LOOP\n"
      "0004    bool ULT    0000  0002\n"
      "0005 >  none GUARDT 0004  #1\n"
      "0006    flt  KFLOAT -1.5e-07\n"
      "0007    none CARG   0000  0006\n"
      "0008    flt  CALL   0007  0  #1\n"
      "0009    int  PHI    0000  0004\n"
      "SNAP #0 ir=0000 pc=4 frames=[] []\n"
      "SNAP #1 ir=0005 pc=2 frames=[f@5/9 g@8/1] [3=0000 5=0006]\n"
      "CALL #0 builtin 0 max 0x1234 dest=3\n";
  ASSERT_EQ(print_ir(parse_ir(text)), text);
  auto try_parse = [](const std::string& t) {
    try {
      TraceIR ir = parse_ir(t);
      print_ir(ir);
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("line ", 0), 0u) << e.what();
    }
  };
  for (size_t n = 0; n <= text.size(); ++n) try_parse(text.substr(0, n));
  for (size_t n = 0; n < text.size(); ++n)
    for (char c : {'0', '9', '#', '[', ']', '=', '@', '/', '-', '%', ' ', '\n', 'x'}) {
      std::string t = text;
      t[n] = c;
      try_parse(t);
    }
}

// Recursion traces: FPUSH/RETGUARD/FPOP, snapshots of another base frame
// (`base=`), and a keyword call whose names list prints as `aux=`.
TEST(IRText, RecursionAndKeywordCallsRoundTrip) {
  const std::string text =
      "0000    func KOBJ   0x1000\n"
      "0001 >  int  SLOAD  0  0  #0\n"
      "0002 >  none RETGUARD 0000  9  #1\n"
      "0003    none FPOP   0001\n"
      "0004 >  int  SLOAD  2  1  #2\n"
      "0005    none SSTORE 3  0004\n"
      "0006 >  none FPUSH  0000  2  #3\n"
      "0007 >  none EXIT    #4\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=3 frames=[] []\n"
      "SNAP #2 ir=0004 pc=9 base=fib frames=[] []\n"
      "SNAP #3 ir=0006 pc=5 base=fib frames=[] []\n"
      "SNAP #4 ir=0007 pc=0 base=fib frames=[] []\n"
      "CALL #0 builtinkw 1 zeros 0x2000 dest=4 aux=0x3000\n";
  TraceIR ir = parse_ir(text);
  EXPECT_EQ(ir.snapshots()[2].base_name, "fib");
  EXPECT_EQ(ir.calls()[0].as<call::BuiltinKw>().names, reinterpret_cast<const void*>(0x3000));
  EXPECT_EQ(print_ir(ir), text);
  // With a resolver the base frame's function is looked up like any frame's.
  FunctionProto fib;
  fib.name = "fib";
  TraceIR resolved = parse_ir(text, [&](std::string_view n) { return n == "fib" ? &fib : nullptr; });
  EXPECT_EQ(resolved.snapshots()[4].base_proto, &fib);
  EXPECT_EQ(print_ir(resolved), text);
}

TEST(IRText, ResolverMustKnowEveryFrame) {
  ProtoResolver none = [](std::string_view) -> FunctionProto* { return nullptr; };
  try {
    parse_ir("SNAP #0 ir=0000 pc=0 frames=[f@1/2] []\n", none);
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "line 1: unknown function 'f'");
  }
}

// An object constant reads as what it is: the recorder describes it while
// the object lives (describe_constant), the text form prints the
// description after the pointer and reads it back, and copying the
// constant into another trace keeps it. A constant nobody described prints
// the pointer alone.
TEST(IRText, ObjectConstantsReadAsWhatTheyAre) {
  const Value s = make_str("say \"hi\"\n");
  FunctionProto fib;
  fib.name = "fib";
  EXPECT_EQ(describe_constant(s), "\"say \\\"hi\\\"\\x0a\"");
  EXPECT_EQ(describe_constant(Value::function(&fib)), "fn fib");
  EXPECT_EQ(describe_constant(make_str(std::string(100, 'a'))), "\"" + std::string(kConstDescriptionMaxChars, 'a') + "\"...");

  TraceIR ir;
  ir.describe_const(&fib, describe_constant(Value::function(&fib)));
  const IRRef f = ir.kobj(&fib, IRType::Func);
  const IRRef anon = ir.kobj(reinterpret_cast<const void*>(uintptr_t{0x1000}), IRType::List);
  ir.assumed_globals().push_back({3, &fib});
  const std::string text = print_ir(ir);
  char ptr[32];
  std::snprintf(ptr, sizeof ptr, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(&fib)));
  const auto hex = [&](const void*) { return std::string(ptr); };
  EXPECT_EQ(f, 0u);
  EXPECT_EQ(anon, 1u);
  EXPECT_NE(text.find("0000    func KOBJ   " + hex(&fib) + "  -- fn fib\n"), std::string::npos) << text;
  EXPECT_NE(text.find("0001    list KOBJ   0x1000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ASSUME global=3 value=" + hex(&fib) + "  -- fn fib\n"), std::string::npos) << text;
  const TraceIR back = parse_ir(text);
  EXPECT_EQ(print_ir(back), text);
  ASSERT_NE(back.const_description(&fib), nullptr);
  EXPECT_EQ(*back.const_description(&fib), "fn fib");

  TraceIR copy;
  copy_constant(ir, f, copy);
  ASSERT_NE(copy.const_description(&fib), nullptr);
  EXPECT_EQ(*copy.const_description(&fib), "fn fib");
}

}  // namespace
}  // namespace tessera::jit
