// A fused call site's kernels (kernel_site.h): K2 first; K3 once
// `specialize` calls in a row had the same shapes, made before the call
// goes on when the queue is not used (background=false) or by the
// background compiler; a dim whose value changed twice is dynamic and stays
// a parameter of later K3 kernels; a site asks for at most `recompiles` K3
// kernels; every run's output equals the interpreter's kernels', and
// inputs that fit no kernel run by reference (and raise its errors).
#include <gtest/gtest.h>

#include <cmath>

#include "codegen/kernel/cpu/kernel_site.h"
#include "vm/core/error.h"

namespace tessera::kir {
namespace {

constexpr const char* kRegion =
    "%0 = input : f32[s0, s1]\n%1 = input : f32[s0, s1]\n%2 = mul(%0, %1) : f32[s0, s1]\n"
    "%3 = tanh(%2) : f32[s0, s1]\n%4 = add(%3, %0) : f32[s0, s1]\noutputs %4\n";

Value wave(Shape shape, double phase) {
  Value v = make_tensor(DType::F32, std::move(shape));
  TensorObj& t = *v.as_tensor();
  for (int64_t i = 0; i < t.numel; ++i) t.set_f(i, std::sin(0.3 * static_cast<double>(i) + phase));
  return v;
}

std::vector<uint8_t> bytes(const Value& v) {
  const TensorObj& t = *v.as_tensor();
  const auto* p = static_cast<const uint8_t*>(t.data());
  return std::vector<uint8_t>(p, p + t.nbytes());
}

class KernelSiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KernelCallConfig c;
    c.specialize = 3;
    c.recompiles = 2;
    c.background = false;  // K3 made before the call goes on: deterministic
    KernelCalls::process().configure(c);
  }
  // Runs the site on [rows, cols] inputs and checks the output against the interpreter's.
  void run(KernelSite& site, int64_t rows, int64_t cols) {
    const std::vector<Value> in = {wave({rows, cols}, 0.1), wave({rows, cols}, 0.7)};
    const Value got = site.run(in);
    EXPECT_EQ(bytes(got), bytes(run_region_reference(region, in)[0])) << rows << "x" << cols;
  }
  const Region region = parse_region(kRegion);
};

TEST_F(KernelSiteTest, SettledShapesGetAK3Kernel) {
  KernelSite site(region, KernelCalls::process());
  const uint64_t k3_runs = KernelCalls::process().stats().k3_runs;
  run(site, 5, 40);
  run(site, 5, 40);
  EXPECT_TRUE(site.k3().empty());
  run(site, 5, 40);  // the third in a row: K3 made (before the call goes on)
  ASSERT_EQ(site.k3().size(), 1u);
  EXPECT_TRUE(site.k3()[0]->kernel().specialized());
  run(site, 5, 40);
  EXPECT_EQ(KernelCalls::process().stats().k3_runs, k3_runs + 1);
  // Another shape fits no K3 kernel: K2 again, with its own output right.
  run(site, 6, 40);
  EXPECT_EQ(site.k3().size(), 1u);
}

TEST_F(KernelSiteTest, AChangingDimIsDynamicAndStaysAParameter) {
  KernelSite site(region, KernelCalls::process());
  for (int64_t rows : {3, 4, 5, 6, 7, 8}) run(site, rows, 24);  // rows change every call
  ASSERT_EQ(site.dynamic().size(), 2u);
  EXPECT_TRUE(site.dynamic()[0]);
  EXPECT_FALSE(site.dynamic()[1]);
  // Cols stayed 24: K3 specializes it, rows stay a parameter.
  ASSERT_EQ(site.k3().size(), 1u);
  const Kernel& k = site.k3()[0]->kernel();
  ASSERT_EQ(k.dim_values.size(), 2u);
  EXPECT_FALSE(k.dim_values[0].has_value());
  EXPECT_EQ(k.dim_values[1], 24);
  const uint64_t k3_runs = KernelCalls::process().stats().k3_runs;
  run(site, 11, 24);  // a rows value never seen: the K3 kernel serves it
  EXPECT_EQ(KernelCalls::process().stats().k3_runs, k3_runs + 1);
}

TEST_F(KernelSiteTest, EveryDimDynamicStaysOnK2) {
  KernelSite site(region, KernelCalls::process());
  for (int64_t n = 2; n < 12; ++n) run(site, n, n + 1);
  EXPECT_TRUE(site.k3().empty());
  EXPECT_FALSE(site.k3_pending());
}

TEST_F(KernelSiteTest, RecompilesStopAtTheLimit) {
  KernelSite site(region, KernelCalls::process());
  const uint64_t capped = KernelCalls::process().stats().capped;
  // Shapes that settle, one after the other: rows 2, then 3, then 4, each
  // for `specialize` calls. Rows change twice by the third: dynamic, so
  // the third settling adds no K3 for a new rows value either.
  for (int64_t rows : {2, 3}) {
    for (int i = 0; i < 3; ++i) run(site, rows, 8);
  }
  EXPECT_EQ(site.k3().size(), 2u);  // the limit
  for (int64_t cols : {16, 32}) {
    for (int i = 0; i < 4; ++i) run(site, 4, cols);
  }
  EXPECT_EQ(site.k3().size(), 2u);
  EXPECT_EQ(KernelCalls::process().stats().capped, capped + 1);
}

TEST_F(KernelSiteTest, InputsThatFitNoKernelRunByReference) {
  KernelSite site(region, KernelCalls::process());
  run(site, 4, 4);
  const std::vector<Value> bad = {wave({4, 4}, 0.0), wave({4, 5}, 0.0)};  // s1 bound to 4 and 5
  EXPECT_THROW(site.run(bad), tessera::RuntimeError);
  const std::vector<Value> i64 = {make_tensor(DType::I64, {4, 4}), wave({4, 4}, 0.0)};
  const uint64_t ref = KernelCalls::process().stats().reference_runs;
  Value got = site.run(i64);  // a dtype the region was not typed for
  EXPECT_EQ(KernelCalls::process().stats().reference_runs, ref + 1);
  EXPECT_EQ(bytes(got), bytes(run_region_reference(region, i64)[0]));
}

}  // namespace
}  // namespace tessera::kir
