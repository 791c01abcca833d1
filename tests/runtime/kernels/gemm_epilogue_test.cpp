// plan_gemm_epilogue (runtime/kernels/gemm_epilogue.h): which fused regions
// after a leading matrix product cuBLASLt's bias epilogue computes whole,
// and why the others keep their kernel. Regions built as fusion builds them
// (Region::add), no device.
#include <gtest/gtest.h>

#include <functional>
#include <optional>

#include "runtime/kernels/gemm_epilogue.h"

namespace tessera::kernels {
namespace {

using device::GemmEpilogue;

// matmul(x, w) of `dt` operands (rank 3 x with `batched`), its value and the
// symbol of the product's last dim.
struct Product {
  Region r;
  int x = 0, w = 0, p = 0, n = 0;
  explicit Product(DType dt, bool batched = false, std::optional<DType> w_dt = std::nullopt) {
    const int m = r.new_symbol(8), k = r.new_symbol(16);
    n = r.new_symbol(24);
    x = batched ? r.add_tensor_input(dt, {r.new_symbol(3), m, k}) : r.add_tensor_input(dt, {m, k});
    w = r.add_tensor_input(w_dt.value_or(dt), {k, n});
    p = *r.add(OpId::MatMul, {x, w});
  }
  int bias(DType dt, std::vector<int> dims = {}) { return r.add_tensor_input(dt, dims.empty() ? std::vector<int>{n} : dims); }
};

TEST(GemmEpilogue, BiasAndReluBiasOfEachFloatTypeRunInTheProduct) {
  for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
    for (bool relu : {false, true}) {
      Product g(dt);
      const int b = g.bias(dt);
      int out = *g.r.add(OpId::Add, {g.p, b});
      if (relu) out = *g.r.add(OpId::Relu, {out});
      g.r.outputs = {out};
      const GemmEpiloguePlan plan = plan_gemm_epilogue(g.r);
      EXPECT_EQ(plan.epilogue, relu ? GemmEpilogue::ReluBias : GemmEpilogue::Bias) << dtype_name(dt) << ": " << plan.why_not;
      EXPECT_EQ(plan.bias_input, 2u);  // x, w, then the bias
      EXPECT_TRUE(plan.why_not.empty());
    }
  }
}

// bias + product, a bias of shape [1, n], a batched product (one bias for
// every batch entry): the same epilogue.
TEST(GemmEpilogue, TheBiasMayComeFirstHaveOnesAndServeABatch) {
  {
    Product g(DType::F16);
    const int b = g.bias(DType::F16);
    g.r.outputs = {*g.r.add(OpId::Relu, {*g.r.add(OpId::Add, {b, g.p})})};
    EXPECT_EQ(plan_gemm_epilogue(g.r).epilogue, GemmEpilogue::ReluBias) << plan_gemm_epilogue(g.r).why_not;
  }
  {
    Product g(DType::F32);
    const int b = g.bias(DType::F32, {kDimOne, g.n});
    g.r.outputs = {*g.r.add(OpId::Add, {g.p, b})};
    EXPECT_EQ(plan_gemm_epilogue(g.r).epilogue, GemmEpilogue::Bias) << plan_gemm_epilogue(g.r).why_not;
  }
  {
    Product g(DType::BF16, true);
    const int b = g.bias(DType::BF16);
    g.r.outputs = {*g.r.add(OpId::Add, {g.p, b})};
    const GemmEpiloguePlan plan = plan_gemm_epilogue(g.r);
    EXPECT_EQ(plan.epilogue, GemmEpilogue::Bias) << plan.why_not;
    EXPECT_EQ(plan.bias_input, 2u);
  }
}

// The interpreter's gelu is erf's; cuBLASLt's GELU epilogue is tanh's.
TEST(GemmEpilogue, GeluStaysInTheKernelBecauseCublasLtsIsTheTanhApproximation) {
  Product g(DType::F32);
  const int b = g.bias(DType::F32);
  g.r.outputs = {*g.r.add(OpId::Gelu, {*g.r.add(OpId::Add, {g.p, b})})};
  const GemmEpiloguePlan plan = plan_gemm_epilogue(g.r);
  EXPECT_FALSE(plan);
  EXPECT_NE(plan.why_not.find("tanh approximation"), std::string::npos) << plan.why_not;
}

// Each shape of region cuBLASLt's epilogue does not compute, with its reason.
TEST(GemmEpilogue, OtherRegionsKeepTheirKernelAndSayWhy) {
  struct Case {
    const char* name;
    std::function<void(Product&)> build;
    DType dt = DType::F32;
    const char* why;
  };
  const std::vector<Case> cases = {
      {"a scalar bias", [](Product& g) { g.r.outputs = {*g.r.add(OpId::Add, {g.p, g.r.add_scalar_input(ScalarKind::Float)})}; },
       DType::F32, "scalar"},
      {"a bias of another dtype (the sum promotes)",
       [](Product& g) { g.r.outputs = {*g.r.add(OpId::Add, {g.p, g.bias(DType::F32)})}; }, DType::F16, "the bias is f32"},
      {"a bias along the rows",
       [&](Product& g) { g.r.outputs = {*g.r.add(OpId::Add, {g.p, g.bias(DType::F32, {g.r.type(g.p).dims[0], kDimOne})})}; },
       DType::F32, "not a vector along the product's last dim"},
      {"a residual (a matrix, not a bias)",
       [](Product& g) { g.r.outputs = {*g.r.add(OpId::Add, {g.p, g.bias(DType::F32, g.r.type(g.p).dims)})}; }, DType::F32,
       "not a vector"},
      {"a scale, not a bias",
       [](Product& g) { g.r.outputs = {*g.r.add(OpId::Mul, {g.p, g.bias(DType::F32)})}; }, DType::F32, "not + bias"},
      {"relu before the bias",
       [](Product& g) { g.r.outputs = {*g.r.add(OpId::Add, {*g.r.add(OpId::Relu, {g.p}), g.bias(DType::F32)})}; },
       DType::F32, "not + bias"},
      {"tanh after the bias",
       [](Product& g) { g.r.outputs = {*g.r.add(OpId::Tanh, {*g.r.add(OpId::Add, {g.p, g.bias(DType::F32)})})}; },
       DType::F32, "no cuBLASLt epilogue"},
      {"more after relu",
       [](Product& g) {
         const int s = *g.r.add(OpId::Relu, {*g.r.add(OpId::Add, {g.p, g.bias(DType::F32)})});
         g.r.outputs = {*g.r.add(OpId::Mul, {s, g.r.add_scalar_input(ScalarKind::Float)})};
       },
       DType::F32, "more than a bias and a relu"},
      {"the sum is an output too",
       [](Product& g) {
         const int s = *g.r.add(OpId::Add, {g.p, g.bias(DType::F32)});
         g.r.outputs = {s, *g.r.add(OpId::Relu, {s})};
       },
       DType::F32, "more than its last value"},
      {"the product added to itself", [](Product& g) { g.r.outputs = {*g.r.add(OpId::Add, {g.p, g.p})}; }, DType::F32,
       "does not add the product once"},
      {"the product alone", [](Product& g) { g.r.outputs = {g.p}; }, DType::F32, "nothing follows"},
  };
  for (const Case& c : cases) {
    Product g(c.dt);
    c.build(g);
    const GemmEpiloguePlan plan = plan_gemm_epilogue(g.r);
    EXPECT_FALSE(plan) << c.name;
    EXPECT_NE(plan.why_not.find(c.why), std::string::npos) << c.name << ": " << plan.why_not;
  }
}

TEST(GemmEpilogue, MixedOperandsVectorsAndNoProductHaveNoPlan) {
  {
    Product g(DType::F16, false, DType::BF16);  // f16 by bf16: an f32 product (the interpreter's promotion)
    EXPECT_EQ(g.r.type(g.p).dtype, DType::F32);
    g.r.outputs = {*g.r.add(OpId::Add, {g.p, g.bias(DType::F32)})};
    const GemmEpiloguePlan plan = plan_gemm_epilogue(g.r);
    EXPECT_FALSE(plan);
    EXPECT_NE(plan.why_not.find("a product of f16 by bf16"), std::string::npos) << plan.why_not;
  }
  {
    Region r;
    const int k = r.new_symbol(12), n = r.new_symbol(7);
    const int v = r.add_tensor_input(DType::F32, {k});
    const int w = r.add_tensor_input(DType::F32, {k, n});
    const int b = r.add_tensor_input(DType::F32, {n});
    r.outputs = {*r.add(OpId::Add, {*r.add(OpId::MatMul, {v, w}), b})};
    EXPECT_NE(plan_gemm_epilogue(r).why_not.find("vector"), std::string::npos) << plan_gemm_epilogue(r).why_not;
  }
  {
    Region r;
    const int s = r.new_symbol(5);
    const int x = r.add_tensor_input(DType::F32, {s});
    r.outputs = {*r.add(OpId::Relu, {x})};
    EXPECT_NE(plan_gemm_epilogue(r).why_not.find("does not start with a matrix product"), std::string::npos);
  }
}

}  // namespace
}  // namespace tessera::kernels
