// CUPTI's account of a GPU's kernels (runtime/kernels/device_kernel_profile.h):
// records joined with the notes of the calls that launched them, summed per
// kernel, with the roofline and the theoretical occupancy; and, with the
// CUPTI test double (tests/runtime/device/cupti_double.cpp) loaded in
// CUPTI's place on the host emulation, the whole path: activity buffers,
// external correlation, --stats lines, the tuner ranking variants by
// CUPTI's kernel time.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "runtime/device/emulated_backend.h"
#include "runtime/kernels/device_kernel_profile.h"
#include "runtime/kernels/gpu_target.h"
#include "runtime/kernels/kernel_runtime.h"

namespace tessera::kernels {
namespace {

using device::DeviceKernelRecord;

// An activity whose records the test writes: each tagged with the id on top
// of the stack when the test "launches".
class FakeActivity : public device::KernelActivity {
 public:
  std::string describe() const override { return "fake activity"; }
  void push(uint64_t id) override { stack.push_back(id); }
  void pop() override { stack.pop_back(); }
  std::vector<DeviceKernelRecord> flush() override { return std::exchange(ready, {}); }
  double instrumentation_ms() const override { return 0.5; }
  uint64_t dropped() const override { return 0; }
  void set_enabled(bool) override {}
  void launch(const std::string& name, double ms, int32_t threads, uint32_t registers) {
    DeviceKernelRecord r;
    r.name = name;
    r.start_ms = clock;
    r.end_ms = clock += ms;
    r.grid[0] = 10, r.grid[1] = r.grid[2] = 1;
    r.block[0] = threads, r.block[1] = r.block[2] = 1;
    r.registers = registers;
    r.dynamic_smem = 1024;
    r.external_id = stack.empty() ? 0 : stack.back();
    ready.push_back(r);
  }
  std::vector<uint64_t> stack;
  std::vector<DeviceKernelRecord> ready;
  double clock = 100;
};

device::DeviceBackend::Limits limits() {
  device::DeviceBackend::Limits l;
  l.dram_gb_s = 1000;
  l.fp32_gflop_s = 10000;
  l.tensor_gflop_s = 100000;
  l.max_threads_per_sm = 2048;
  l.max_blocks_per_sm = 32;
  l.registers_per_sm = 65536;
  l.shared_bytes_per_sm = 100 * 1024;
  return l;
}

LaunchNote note(bool tuning = false) {
  LaunchNote n;
  n.site_id = "k1";
  n.site = "gpu k1 (mul)";
  n.tier = "K3";
  n.variant = "tile=1024,threads=256";
  n.main = "tsr_region";
  n.tuning = tuning;
  n.work["tsr_region"] = {4'000'000, 1'000'000, false};
  return n;
}

TEST(DeviceKernelProfile, RecordsAreSummedPerKernelOfTheCallsThatLaunchedThem) {
  FakeActivity a;
  DeviceKernelProfile p(&a, "", limits());
  ASSERT_TRUE(p.active());
  for (int i = 0; i < 3; ++i) {
    const uint64_t id = p.begin(note());
    EXPECT_EQ(a.stack.back(), id);
    a.launch("tsr_region", 2.0, 256, 64);
    a.launch("cublas_gemm", 1.0, 128, 96);  // another kernel of the call: no work noted for it
    p.end();
  }
  EXPECT_TRUE(a.stack.empty());
  a.launch("someone_elses", 5.0, 32, 8);  // launched under no id: not Tessera's
  p.flush(true);
  const std::vector<ProfiledKernel> ks = p.kernels();
  ASSERT_EQ(ks.size(), 2u);
  const ProfiledKernel& gemm = ks[0].name == "cublas_gemm" ? ks[0] : ks[1];
  const ProfiledKernel& k = ks[0].name == "tsr_region" ? ks[0] : ks[1];
  EXPECT_EQ(k.calls, 3u);
  EXPECT_DOUBLE_EQ(k.device_ms, 6.0);
  EXPECT_EQ(k.bytes, 12'000'000);
  EXPECT_EQ(k.flops, 3'000'000);
  EXPECT_EQ(k.registers, 64u);
  EXPECT_EQ(k.threads, 256);
  EXPECT_EQ(k.blocks, 10);
  EXPECT_EQ(k.dynamic_smem, 1024);
  EXPECT_NEAR(k.gb_s(), 2.0, 1e-12);  // 12 MB in 6 ms
  EXPECT_EQ(gemm.calls, 3u);
  EXPECT_EQ(gemm.bytes, 0);
  EXPECT_DOUBLE_EQ(p.site_ms("k1"), 9.0);
  EXPECT_EQ(p.records(), 6u);  // its own: not someone_elses
}

// Two VMs in one process share CUPTI's one activity: a record one's flush
// takes for the other's call reaches the other at its flush.
TEST(DeviceKernelProfile, TwoProfilesOnOneActivityEachGetTheirOwnRecords) {
  FakeActivity a;
  DeviceKernelProfile p(&a, "", limits()), q(&a, "", limits());
  const uint64_t pid = p.begin(note());
  a.launch("tsr_region", 1.0, 256, 32);
  p.end();
  const uint64_t qid = q.begin(note());
  a.launch("tsr_region", 3.0, 128, 32);
  q.end();
  EXPECT_NE(pid, qid);
  p.flush(true);  // takes both records
  ASSERT_EQ(p.kernels().size(), 1u);
  EXPECT_DOUBLE_EQ(p.kernels()[0].device_ms, 1.0);
  q.flush(true);
  ASSERT_EQ(q.kernels().size(), 1u);
  EXPECT_DOUBLE_EQ(q.kernels()[0].device_ms, 3.0);
  EXPECT_EQ(q.kernels()[0].threads, 128);
}

TEST(DeviceKernelProfile, ATimedVariantIsTheTunersNotACall) {
  FakeActivity a;
  DeviceKernelProfile p(&a, "", limits());
  const uint64_t id = p.begin(note(true));
  a.launch("tsr_region", 0.25, 128, 32);
  a.launch("tsr_region", 0.25, 128, 32);
  p.end();
  p.flush(true);
  EXPECT_DOUBLE_EQ(p.ms_of(id), 0.5);
  EXPECT_TRUE(p.kernels().empty());
  EXPECT_DOUBLE_EQ(p.site_ms("k1"), 0.0);
}

TEST(DeviceKernelProfile, WithoutAnActivityNothingIsRecordedAndItSaysWhy) {
  DeviceKernelProfile p(nullptr, "no CUPTI here", limits());
  EXPECT_FALSE(p.active());
  EXPECT_EQ(p.begin(note()), 0u);
  p.end();
  p.flush(true);
  EXPECT_EQ(p.why_not(), "no CUPTI here");
  EXPECT_TRUE(p.kernels().empty());
}

TEST(DeviceKernelProfile, TheRooflineBoundIsTheLowerOfBandwidthAndArithmetic) {
  ProfiledKernel k;
  k.device_ms = 1;
  k.bytes = 100'000'000;  // 100 GB/s achieved
  k.flops = 50'000'000;   // 0.5 FLOP/B: bound by bandwidth, 500 GFLOP/s
  RooflinePoint p = roofline_of(k, limits());
  EXPECT_DOUBLE_EQ(p.intensity, 0.5);
  EXPECT_DOUBLE_EQ(p.bound, 500);
  EXPECT_DOUBLE_EQ(p.fraction, 50.0 / 500);
  k.flops = 1'000'000'000'000;  // 10^4 FLOP/B: the FP32 peak bounds it
  p = roofline_of(k, limits());
  EXPECT_DOUBLE_EQ(p.bound, 10000);
  k.tensor_cores = true;
  EXPECT_DOUBLE_EQ(roofline_of(k, limits()).bound, 100000);
  k.flops = 0;  // moves data only: its bandwidth against the peak
  p = roofline_of(k, limits());
  EXPECT_DOUBLE_EQ(p.bound, 1000);
  EXPECT_DOUBLE_EQ(p.fraction, 0.1);
  EXPECT_EQ(roofline_of(k, {}).bound, 0);  // limits unknown
}

TEST(DeviceKernelProfile, OccupancyIsLimitedByThreadsRegistersAndSharedMemory) {
  EXPECT_DOUBLE_EQ(theoretical_occupancy(256, 32, 0, limits()), 1.0);
  EXPECT_DOUBLE_EQ(theoretical_occupancy(256, 128, 0, limits()), 0.25);  // 32768 registers a block: 2 blocks
  EXPECT_DOUBLE_EQ(theoretical_occupancy(256, 32, 50 * 1024, limits()), 0.25);  // 2 blocks of shared memory
  EXPECT_DOUBLE_EQ(theoretical_occupancy(256, 32, 0, {}), 0.0);
}

// The emulation with the CUPTI double.
constexpr const char* kScale = "%0 = input : f32[s0]\n%1 = input : float\n%2 = mul(%0, %1) : f32[s0]\noutputs %2\n";

Value ones(int64_t n) {
  Value v = make_tensor(DType::F32, {n});
  for (int64_t i = 0; i < n; ++i) v.as_tensor()->set_f(i, 1.0);
  return v;
}

struct EmulatedGpu {
  explicit EmulatedGpu(int specialize, GpuTarget::Options options = {}) {
    setenv("TESSERA_CUPTI_LIBRARY", TESSERA_CUPTI_DOUBLE, 1);
    KernelRuntimeConfig c;
    c.specialize = specialize;
    c.background = false;
    rt.configure(c);
    gpu = std::make_shared<GpuTarget>(std::make_shared<device::EmulatedBackend>(), rt.store(), options);
    rt.set_device(gpu);
  }
  KernelRuntime rt;
  std::shared_ptr<GpuTarget> gpu;
  std::shared_ptr<const Region> region = std::make_shared<const Region>(parse_region(kScale));
};

TEST(CuptiDouble, TheEmulationsKernelsAreRecordedPerFusedKernel) {
  EmulatedGpu g(0);  // K2 only
  ASSERT_TRUE(g.gpu->profile().active()) << g.gpu->profile().why_not();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(g.rt.run(g.region, std::vector<Value>{ones(1000), Value::number(2.0)}).is_tensor());
  g.gpu->finish_profile();
  const std::vector<ProfiledKernel> ks = g.gpu->profile().kernels();
  ASSERT_EQ(ks.size(), 1u);
  const ProfiledKernel& k = ks[0];
  EXPECT_EQ(k.name, "tsr_region");
  EXPECT_EQ(k.tier, "K2");
  EXPECT_EQ(k.site.rfind("gpu k", 0), 0u) << k.site;
  EXPECT_EQ(k.calls, 3u);
  EXPECT_GT(k.device_ms, 0);
  EXPECT_EQ(k.bytes, 3 * 8000);  // 1000 floats in and out
  EXPECT_EQ(k.flops, 3 * 1000);
  EXPECT_EQ(k.registers, 32u);  // the double's figure
  EXPECT_GT(k.threads, 0);
  EXPECT_GT(k.occupancy, 0);  // against the emulation's stated limits
  const std::string report = g.gpu->report(g.rt);
  EXPECT_NE(report.find("gpu profile: CUPTI "), std::string::npos) << report;
  EXPECT_NE(report.find("0.25 ms instrumenting modules"), std::string::npos) << report;
  EXPECT_NE(report.find(k.site + " tsr_region K2"), std::string::npos) << report;
  EXPECT_NE(report.find("3 calls"), std::string::npos) << report;
  EXPECT_NE(report.find("far below its roofline"), std::string::npos) << report;  // the host is no H100
}

// The double reports kernels of one block size 1000 times longer than they
// ran: a tuner that ranks by CUPTI's time picks the other block size, and
// picks the other way when the double slows the other one.
TEST(CuptiDouble, TheTunerRanksVariantsByCuptisKernelTime) {
  for (int slow : {256, 128}) {
    setenv("TESSERA_CUPTI_DOUBLE_SCALE", (std::to_string(slow) + ":1000").c_str(), 1);
    EmulatedGpu g(2);
    const int64_t n = slow == 256 ? 3000 : 5000;  // other dims: tuned afresh
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(g.rt.run(g.region, std::vector<Value>{ones(n), Value::number(2.0)}).is_tensor());
    g.gpu->finish_profile();
    EXPECT_EQ(g.rt.counters("gpu").k3_tuned.load(), 1u);
    const std::vector<ProfiledKernel> ks = g.gpu->profile().kernels();
    bool k3 = false;
    for (const ProfiledKernel& k : ks)
      if (std::string(k.tier) == "K3") {
        k3 = true;
        EXPECT_NE(k.threads, slow) << k.variant;
      }
    EXPECT_TRUE(k3);
    const std::string report = g.gpu->report(g.rt);
    EXPECT_NE(report.find("variants timed by CUPTI's kernel time"), std::string::npos) << report;
    EXPECT_NE(report.find("by CUDA events 0"), std::string::npos) << report;
  }
  unsetenv("TESSERA_CUPTI_DOUBLE_SCALE");
}

// K3 by time: the double reports the K2 kernel (256 threads) 1000 times
// longer than it ran, so 5 calls spend over 1 ms on the "device" and ask
// for K3 before specialize=16 calls; reported 1000 times shorter, they do not.
TEST(CuptiDouble, ASiteThatSpendsTimeOnTheDeviceGoesToK3BeforeItsCallCount) {
  for (const char* scale : {"256:1000", "256:0.0001"}) {
    setenv("TESSERA_CUPTI_DOUBLE_SCALE", scale, 1);
    EmulatedGpu g(16);
    const int64_t n = scale[4] == '1' ? 6000 : 7000;  // other dims than the other tests'
    for (int i = 0; i < 6; ++i) ASSERT_TRUE(g.rt.run(g.region, std::vector<Value>{ones(n), Value::number(2.0)}).is_tensor());
    const TargetCounters& c = g.rt.counters("gpu");
    EXPECT_EQ(c.promoted_by_time.load(), scale[4] == '1' ? 1u : 0u) << scale;
    EXPECT_EQ(c.promotions.load() > 0, scale[4] == '1') << scale;
  }
  unsetenv("TESSERA_CUPTI_DOUBLE_SCALE");
}

// Metrics on demand (kprofile, --profile-kernels) with the double's range
// profiler: each kernel's first call is measured in a launch of its own,
// which is no call of the kernel's.
GpuTarget::Options with_metrics(bool cupti = true) {
  GpuTarget::Options o;
  o.kprofile = true;
  o.cupti = cupti;
  return o;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(CuptiDouble, WithKprofileAKernelsFirstCallIsMeasured) {
  EmulatedGpu g(0, with_metrics());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(g.rt.run(g.region, std::vector<Value>{ones(1000), Value::number(2.0)}).is_tensor());
  g.gpu->finish_profile();
  const std::vector<ProfiledKernel> ks = g.gpu->profile().kernels();
  ASSERT_EQ(ks.size(), 1u);
  const ProfiledKernel& k = ks[0];
  EXPECT_EQ(k.calls, 3u);  // the measured launch is not counted as a call
  const KernelMetricValues& m = k.metrics;
  EXPECT_EQ(m.passes, 2);
  // The double's figures for this launch's shape (cupti_double_profiler.cpp).
  const double warps = static_cast<double>((k.threads + 31) / 32);
  EXPECT_DOUBLE_EQ(m.occupancy_pct, 100 * warps / 64) << k.blocks << " blocks of " << k.threads;
  EXPECT_DOUBLE_EQ(m.dram_pct, 80 * static_cast<double>(k.blocks) / 132);
  EXPECT_DOUBLE_EQ(m.tensor_pct, 0);
  const std::string report = g.gpu->report(g.rt);
  EXPECT_NE(report.find("; measured: DRAM "), std::string::npos) << report;
  EXPECT_NE(report.find("% achieved, tensor pipes 0.0% (2 passes)"), std::string::npos) << report;
  EXPECT_NE(report.find("gpu metrics: 1 kernels measured by CUPTI's range profiler"), std::string::npos) << report;
}

// Every K3 variant the tuner times is measured too (outside its timed
// launches); the one kept runs the calls with its figures.
TEST(CuptiDouble, WithKprofileTheVariantsBeingTunedAreMeasured) {
  EmulatedGpu g(2, with_metrics());
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(g.rt.run(g.region, std::vector<Value>{ones(7000), Value::number(2.0)}).is_tensor());
  g.gpu->finish_profile();
  EXPECT_EQ(g.rt.counters("gpu").k3_tuned.load(), 1u);
  const uint64_t variants = g.rt.counters("gpu").variants_timed.load();
  EXPECT_GT(variants, 1u);
  bool k3 = false;
  for (const ProfiledKernel& k : g.gpu->profile().kernels()) {
    EXPECT_EQ(k.metrics.passes, 2) << k.tier << " " << k.variant;
    k3 = k3 || k.tier == "K3";
  }
  EXPECT_TRUE(k3);
  const std::string report = g.gpu->report(g.rt);
  // K2's first call and each variant timed.
  EXPECT_NE(report.find(fmt::format("gpu metrics: {} kernels measured", variants + 1)), std::string::npos) << report;
}

TEST(CuptiDouble, WithoutKprofileNothingIsMeasured) {
  EmulatedGpu g(0);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(g.rt.run(g.region, std::vector<Value>{ones(1000), Value::number(2.0)}).is_tensor());
  g.gpu->finish_profile();
  const std::vector<ProfiledKernel> ks = g.gpu->profile().kernels();
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_EQ(ks[0].metrics.passes, 0);
  const std::string report = g.gpu->report(g.rt);
  EXPECT_EQ(report.find("measured:"), std::string::npos) << report;
  EXPECT_EQ(report.find("gpu metrics"), std::string::npos) << report;
}

TEST(CuptiDouble, MetricsThatCannotBeMeasuredAreSaidWhyOnce) {
  setenv("TESSERA_CUPTI_DOUBLE_PRIVILEGES", "0", 1);
  EmulatedGpu g(0, with_metrics());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(g.rt.run(g.region, std::vector<Value>{ones(1000), Value::number(2.0)}).is_tensor());
  unsetenv("TESSERA_CUPTI_DOUBLE_PRIVILEGES");
  g.gpu->finish_profile();
  const std::vector<ProfiledKernel> ks = g.gpu->profile().kernels();
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_EQ(ks[0].calls, 3u);
  EXPECT_EQ(ks[0].metrics.passes, 0);
  const std::string report = g.gpu->report(g.rt);
  EXPECT_EQ(count_of(report, "gpu metrics:"), 1u) << report;
  EXPECT_NE(report.find("gpu metrics: not measured: cuptiRangeProfilerStart: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("measured: DRAM"), std::string::npos) << report;

  // Without the kernels' records there is nothing to show them with.
  EmulatedGpu off(0, with_metrics(false));
  ASSERT_TRUE(off.rt.run(off.region, std::vector<Value>{ones(1000), Value::number(2.0)}).is_tensor());
  const std::string r = off.gpu->report(off.rt);
  EXPECT_NE(r.find("gpu metrics: not measured: no kernel records to show them with: the JIT parameter cupti=0"),
            std::string::npos)
      << r;
}

}  // namespace
}  // namespace tessera::kernels
