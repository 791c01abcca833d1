// A fused call site's kernels on the CPU (runtime/kernels/kernel_site.h):
// K2 first; K3 once `specialize` calls in a row had the same shapes, made
// before the call goes on when there is no background compiler; a dim whose
// value changed twice is dynamic and stays a parameter of later K3 kernels;
// a site asks for at most `recompiles` K3 kernels; every run's output equals
// the interpreter's kernels', and inputs that fit no kernel run by reference
// (and raise its errors).
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/kernels/kernel_runtime.h"
#include "runtime/kernels/kernel_site.h"
#include "tests/support/tensor_values.h"
#include "vm/core/error.h"

namespace tessera::kernels {
namespace {

constexpr const char* kRegion =
    "%0 = input : f32[s0, s1]\n%1 = input : f32[s0, s1]\n%2 = mul(%0, %1) : f32[s0, s1]\n"
    "%3 = tanh(%2) : f32[s0, s1]\n%4 = add(%3, %0) : f32[s0, s1]\noutputs %4\n";

Value wave(Shape shape, double phase) {
  return testing::f32_tensor(std::move(shape), [&](int64_t i) { return std::sin(0.3 * static_cast<double>(i) + phase); });
}

using testing::tensor_bytes;

class KernelSiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KernelRuntimeConfig c;
    c.specialize = 3;
    c.recompiles = 2;
    c.background = false;  // K3 made before the call goes on: deterministic
    rt.configure(c);
  }
  // Runs the site on [rows, cols] inputs and checks the output against the interpreter's.
  void run(int64_t rows, int64_t cols) {
    const std::vector<Value> in = {wave({rows, cols}, 0.1), wave({rows, cols}, 0.7)};
    const Value got = rt.run(region, in);
    EXPECT_EQ(tensor_bytes(got), tensor_bytes(run_region_reference(*region, in)[0])) << rows << "x" << cols;
  }
  const KernelSite::OnTarget& cpu() { return rt.site(region).cpu(); }
  KernelRuntime rt;
  const std::shared_ptr<const Region> region = std::make_shared<const Region>(parse_region(kRegion));
};

TEST_F(KernelSiteTest, SettledShapesGetAK3Kernel) {
  run(5, 40);
  run(5, 40);
  EXPECT_TRUE(cpu().k3.empty());
  run(5, 40);  // the third in a row: K3 made (before the call goes on)
  ASSERT_EQ(cpu().k3.size(), 1u);
  EXPECT_EQ(cpu().k3[0]->spec, (DimSpec{5, 40}));
  run(5, 40);
  EXPECT_EQ(rt.stats().k3_runs, 1u);
  EXPECT_EQ(rt.stats().promotions, 1u);
  // Another shape fits no K3 kernel: K2 again, with its own output right.
  run(6, 40);
  EXPECT_EQ(cpu().k3.size(), 1u);
  EXPECT_EQ(rt.stats().k2_runs, 4u);
  EXPECT_EQ(rt.stats().sites, 1u);
}

TEST_F(KernelSiteTest, AChangingDimIsDynamicAndStaysAParameter) {
  for (int64_t rows : {3, 4, 5, 6, 7, 8}) run(rows, 24);  // rows change every call
  ASSERT_EQ(cpu().policy.dynamic().size(), 2u);
  EXPECT_TRUE(cpu().policy.dynamic()[0]);
  EXPECT_FALSE(cpu().policy.dynamic()[1]);
  EXPECT_EQ(rt.stats().dynamic_dims, 1u);
  // Cols stayed 24: K3 specializes it, rows stay a parameter.
  ASSERT_EQ(cpu().k3.size(), 1u);
  EXPECT_EQ(cpu().k3[0]->spec, (DimSpec{std::nullopt, 24}));
  const uint64_t k3_runs = rt.stats().k3_runs;
  run(11, 24);  // a rows value never seen: the K3 kernel serves it
  EXPECT_EQ(rt.stats().k3_runs, k3_runs + 1);
}

TEST_F(KernelSiteTest, EveryDimDynamicStaysOnK2) {
  for (int64_t n = 2; n < 12; ++n) run(n, n + 1);
  EXPECT_TRUE(cpu().k3.empty());
  EXPECT_EQ(cpu().k3_pending, nullptr);
}

TEST_F(KernelSiteTest, RecompilesStopAtTheLimit) {
  // Shapes that settle, one after the other: rows 2, then 3, then 4, each
  // for `specialize` calls. Rows change twice by the third: dynamic, so
  // the third settling adds no K3 for a new rows value either.
  for (int64_t rows : {2, 3}) {
    for (int i = 0; i < 3; ++i) run(rows, 8);
  }
  EXPECT_EQ(cpu().k3.size(), 2u);  // the limit
  EXPECT_EQ(rt.stats().recompiles, 1u);
  for (int64_t cols : {16, 32}) {
    for (int i = 0; i < 4; ++i) run(4, cols);
  }
  EXPECT_EQ(cpu().k3.size(), 2u);
  EXPECT_EQ(rt.stats().capped, 1u);
}

TEST_F(KernelSiteTest, InputsThatFitNoKernelRunByReference) {
  run(4, 4);
  const std::vector<Value> bad = {wave({4, 4}, 0.0), wave({4, 5}, 0.0)};  // s1 bound to 4 and 5
  EXPECT_THROW(rt.run(region, bad), tessera::RuntimeError);
  const std::vector<Value> i64 = {make_tensor(DType::I64, {4, 4}), wave({4, 4}, 0.0)};
  const uint64_t ref = rt.stats().reference_runs;
  Value got = rt.run(region, i64);  // a dtype the region was not typed for
  EXPECT_EQ(rt.stats().reference_runs, ref + 1);
  EXPECT_EQ(tensor_bytes(got), tensor_bytes(run_region_reference(*region, i64)[0]));
}

// With the background compiler, K3 is tuned there while K2 serves the calls.
TEST_F(KernelSiteTest, TheBackgroundCompilerMakesK3WhileK2Serves) {
  KernelRuntimeConfig c = rt.config();
  c.background = true;
  rt.configure(c);
  for (int i = 0; i < 3; ++i) run(5, 40);
  rt.drain_background();
  run(5, 40);  // collects the K3 kernel and runs it
  EXPECT_EQ(cpu().k3.size(), 1u);
  EXPECT_EQ(rt.stats().k3_kernels, 1u);
  EXPECT_EQ(rt.stats().k3_runs, 1u);
  EXPECT_GT(rt.counters("cpu").variants_timed.load(), 1u);
}

// Two regions are two sites; a region's site is found again by the region.
TEST_F(KernelSiteTest, EachRegionHasItsOwnSite) {
  auto other = std::make_shared<const Region>(parse_region(kRegion));
  KernelSite& a = rt.site(region);
  KernelSite& b = rt.site(other);
  EXPECT_NE(&a, &b);
  EXPECT_EQ(&rt.site(region), &a);
  EXPECT_EQ(&rt.site(other), &b);
}

}  // namespace
}  // namespace tessera::kernels
