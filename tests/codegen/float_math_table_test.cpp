// The trace's float-math rows (tracer/float_math.def) that the elementwise
// table (vm/tensor/elementwise_ops.def) names compute the interpreter's
// result of the built-in, bit for bit: T1 and T2 call these helpers for
// name(x) of a number.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "codegen/host/trace_helpers.h"
#include "vm/tensor/elementwise_ops.h"
#include "vm/tensor/kernels.h"

namespace tessera::jit {
namespace {

TEST(FloatMathTable, RowsOfTheElementwiseTableEqualTheInterpreter) {
  const double inf = std::numeric_limits<double>::infinity();
  const double xs[] = {0.0, -0.0, 0.3, -1.7, 2.5, 40.0, -40.0, 800.0, -800.0, inf, -inf, std::nan("")};
  int rows = 0;
  for (int i = 0; i < kNumUnary; ++i) {
    const Unary u = static_cast<Unary>(i);
    const FloatMath fm = float_math_by_name(unary_op_name(u));
    if (fm == FloatMath::NumFns) continue;
    ++rows;
    EXPECT_STREQ(float_math_name(fm), unary_op_name(u));
    for (double x : xs) {
      const double want = unary_scalar(u, Value::number(x), unary_op_name(u)).as_float();
      // The helper both tiers call for the row (codegen/host/trace_helpers.h).
      const std::string helper = std::string("tessera_jit_") + float_math_name(fm);
      const auto fn = reinterpret_cast<double (*)(double)>(trace_helper(helper.c_str()).address);
      const double got = fn(x);
      EXPECT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(want)) << unary_op_name(u) << "(" << x << ")";
    }
  }
  EXPECT_GE(rows, 2);  // at least softplus and erf
  EXPECT_NE(float_math_by_name("softplus"), FloatMath::NumFns);
  EXPECT_NE(float_math_by_name("erf"), FloatMath::NumFns);
}

}  // namespace
}  // namespace tessera::jit
