// The table of C helpers compiled traces call (codegen/host/trace_helpers.h):
// every helper-call opcode has a row, and each row's signature takes what
// the opcode's instructions carry (ir.def's operand and result columns).
#include "codegen/host/trace_helpers.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "tracer/trace_ir.h"

namespace tessera::jit {
namespace {

// The helper type of a value of ir.def type column `rule`, as an argument
// or result: floats are doubles, ints int64; an object is a pointer; a
// bool result a C bool.
bool fits(HelperType t, const IRTypeRule& rule, bool payload) {
  switch (t) {
    case HelperType::F64: return rule.name == std::string("flt");
    case HelperType::I64: return payload ? !rule.allows(IRType::None) : rule.name == std::string("int");
    case HelperType::Ptr: return rule.name == std::string("list") || rule.name == std::string("str");
    // A C bool, which the tiers widen to the IR's (SLT, SLE).
    case HelperType::I8: return !payload && rule.name == std::string("bool");
    default: return false;
  }
}

TEST(TraceHelpers, EveryHelperCallOpcodeHasARow) {
  for (int i = 0; i < kNumIROps; ++i) {
    const IROp op = static_cast<IROp>(i);
    const IROpInfo& info = ir_op_info(op);
    SCOPED_TRACE(info.name);
    // ir.def's `call` flag (values live across it go to preserved registers)
    // and its HELPER column say the same.
    EXPECT_EQ(info.calls_helper, info.helper != IRHelper::none);
    if (info.helper == IRHelper::none) {
      EXPECT_EQ(trace_helper_of(IRIns{op, IRType::None}), nullptr);
      continue;
    }
    const TraceHelper* h = trace_helper_of(IRIns{op, info.result_type.allows(IRType::Float) ? IRType::Float : IRType::Int});
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(h->column, info.helper);
    EXPECT_NE(h->address, nullptr);
  }
}

// What the recorder emits: operands that are references, typed by ir.def's
// columns. A helper takes each such operand once, in order, as a value of
// its column's type (an I64 payload may be any value: trace_abi.h); a
// helper whose return value is the instruction's has the result's type.
TEST(TraceHelpers, SignaturesTakeWhatTheOpcodesCarry) {
  for (int i = 0; i < kNumIROps; ++i) {
    const IROp op = static_cast<IROp>(i);
    const IROpInfo& info = ir_op_info(op);
    if (info.helper == IRHelper::none || op == IROp::CALL) continue;
    SCOPED_TRACE(info.name);
    const TraceHelper& h = *trace_helper_of(IRIns{op, IRType::Float});
    int operands = 0;
    for (uint8_t a = 0; a < h.nargs; ++a) {
      if (h.args[a] != HelperArg::Op1 && h.args[a] != HelperArg::Op2) continue;
      const int k = h.args[a] == HelperArg::Op1 ? 0 : 1;
      EXPECT_EQ(k, operands) << "operands out of order";
      EXPECT_EQ(k == 0 ? info.op1 : info.op2, OperandKind::ref);
      EXPECT_TRUE(fits(h.types[a], ir_operand_type(op, k), h.result != HelperResult::Value)) << "argument " << int(a);
      ++operands;
    }
    EXPECT_EQ(operands, (info.op1 == OperandKind::ref) + (info.op2 == OperandKind::ref));
    if (h.result == HelperResult::Value) EXPECT_TRUE(fits(h.ret, info.result_type, false));
    else EXPECT_EQ(h.ret, HelperType::I8);  // a success flag
  }
}

// CALL's helper takes the CARG chain whatever its length (tags, payloads,
// count), and the target and context the generated code passes.
TEST(TraceHelpers, CallTakesItsArgumentChain) {
  const TraceHelper& h = *trace_helper_of(IRIns{IROp::CALL, IRType::None});
  EXPECT_STREQ(h.name, "tessera_jit_call");
  EXPECT_EQ(h.result, HelperResult::Ok);
  std::set<HelperArg> sources(h.args.begin(), h.args.begin() + h.nargs);
  for (HelperArg a : {HelperArg::Ctx, HelperArg::Target, HelperArg::ArgTags, HelperArg::ArgPayloads,
                      HelperArg::ArgCount, HelperArg::ExpectTag, HelperArg::ResultOut})
    EXPECT_EQ(sources.count(a), 1u) << int(a);
}

TEST(TraceHelpers, FloatMathRowsFollowTheTable) {
  const char* const c_names[] = {
#define FLOATMATH(Name, fn, t1, t2, impl) "tessera_jit_" #fn,
#include "tracer/float_math.def"
#undef FLOATMATH
  };
  for (uint32_t id = 0; id < static_cast<uint32_t>(FloatMath::NumFns); ++id) {
    const TraceHelper* h = trace_helper_of(IRIns{IROp::FMATH, IRType::Float, kNoSnap, 0, id});
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(h->column, IRHelper::float_math);
    EXPECT_STREQ(h->name, c_names[id]);
    EXPECT_TRUE(h->pure);
  }
  EXPECT_THROW(trace_helper_of(IRIns{IROp::FMATH, IRType::Float, kNoSnap, 0, 999}), std::runtime_error);
}

// The helpers no opcode names are in the table too, once each by name.
TEST(TraceHelpers, EveryHelperOnce) {
  std::set<std::string> names;
  for (const TraceHelper* h = trace_helpers_begin(); h != trace_helpers_end(); ++h) {
    EXPECT_TRUE(names.insert(h->name).second) << h->name;
    EXPECT_LE(h->nargs, TraceHelper::kMaxArgs);
    EXPECT_EQ(&trace_helper(h->name), h);
  }
  for (const char* internal : {"tessera_jit_free", "tessera_jit_tensor_fetch", "tessera_jit_global_stored",
                               "tessera_jit_clear_registers", "tessera_jit_release_slots", "tessera_jit_restore_exit"})
    EXPECT_EQ(trace_helper(internal).column, IRHelper::none) << internal;
  EXPECT_THROW(trace_helper("tessera_jit_nothing"), std::logic_error);
}

}  // namespace
}  // namespace tessera::jit
