// Two (three) VMs in one process, through the C ABI, each with its own JIT
// parameters, device, kernel cache and dump, run fused tensor loops at the
// same time from their own threads: each VM's kernels, tuning and --stats
// counters are its own (runtime/kernels/kernel_runtime.h: one kernel
// runtime per VM, no process-global state).
#include <gtest/gtest.h>
#include <tessera/tessera.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Outcome {
  std::string out, stats, error;
};

// Creates a VM on `device` with `params` (and a dump directory), runs `src`, returns its output and --stats text.
Outcome run_vm(const char* device, std::vector<const char*> params, const std::string& dump, const std::string& src) {
  Outcome r;
  tsr_vm_options o;
  tsr_vm_options_init(&o);
  o.device = device;
  o.jit_params = params.data();
  o.n_jit_params = params.size();
  o.out = [](void* user, const char* data, size_t len) { static_cast<std::string*>(user)->append(data, len); };
  o.out_user = &r.out;
  tsr_vm* vm = nullptr;
  if (tsr_vm_create(&o, &vm) != TSR_SUCCESS) {
    r.error = tsr_last_error(nullptr);
    return r;
  }
  if (!dump.empty() && tsr_enable_dump(vm, dump.c_str()) != TSR_SUCCESS) r.error = tsr_last_error(vm);
  if (r.error.empty() && tsr_run_source(vm, "loop.tsb", src.data(), src.size()) != TSR_SUCCESS)
    r.error = tsr_last_error(vm);
  tsr_value text{0};
  if (tsr_stats(vm, TSR_STATS_TEXT, &text) == TSR_SUCCESS) {
    const char* data = nullptr;
    size_t len = 0;
    if (tsr_get_str(vm, text, &data, &len) == TSR_SUCCESS) r.stats.assign(data, len);
    tsr_value_free(vm, text);
  }
  tsr_vm_destroy(vm);
  return r;
}

// A loop of 60 fused calls of `expr` (of x, a [4096] tensor).
std::string loop(const std::string& expr) {
  return "let x = arange(4096, dtype=f32) * 0.001\nlet acc = 0.0\n"
         "for i in range(60) { acc = acc + item(sum(" +
         expr + ")) }\nprint(acc > 0)\n";
}

struct CpuKernels {
  int k2 = -1, k3 = -1, k2_runs = -1, k3_runs = -1, reference_runs = -1;
  int calls() const { return k2_runs + k3_runs + reference_runs; }
};

// The --stats line "kernels: K2 a, K3 b (...); calls run by K2 c, by K3 d, by the interpreter's kernels e".
// (Read with sscanf: GCC 12 warns inside std::regex in the sanitizer build.)
CpuKernels cpu_kernels(const std::string& stats) {
  CpuKernels k;
  const size_t line = stats.find("  kernels: K2 ");
  const size_t calls = stats.find("calls run by K2 ", line);
  if (line == std::string::npos || calls == std::string::npos) return k;
  if (std::sscanf(stats.c_str() + line, "  kernels: K2 %d, K3 %d", &k.k2, &k.k3) != 2 ||
      std::sscanf(stats.c_str() + calls, "calls run by K2 %d, by K3 %d, by the interpreter's kernels %d", &k.k2_runs,
                  &k.k3_runs, &k.reference_runs) != 3)
    return CpuKernels{};
  return k;
}

std::string files_text(const fs::path& dir, const std::string& ext) {
  std::string all;
  if (!fs::exists(dir)) return all;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ext) {
      std::ifstream in(e.path());
      std::stringstream s;
      s << in.rdbuf();
      all += s.str();
    }
  return all;
}

TEST(TwoVMs, EachVMsKernelsTuningAndCountersAreItsOwn) {
  const fs::path base = fs::temp_directory_path() / ("tessera-two-vms-" + std::to_string(::getpid()));
  fs::remove_all(base);
  const fs::path cache = base / "cache", dump = base / "dump";
  ::setenv("TESSERA_CACHE_DIR", cache.c_str(), 1);
  ::setenv("TESSERA_GPU_EMULATION", "1", 1);  // the third VM's --device=gpu is the host emulation
  Outcome a, c, g;
  // A: the CPU, K3 after 2 settled calls, the kernel cache, a dump.
  std::thread ta([&] {
    a = run_vm("cpu", {"hotloop=5", "specialize=2", "async=0", "kcache=1"}, dump.string(), loop("tanh(x * 1.5 + x) * 2.0"));
  });
  // C: the CPU, never K3, no cache, no dump.
  std::thread tc([&] {
    c = run_vm("cpu", {"hotloop=5", "specialize=0", "async=0", "kcache=0"}, "", loop("sigmoid(x * 0.5 - x) * 3.0"));
  });
  // G: the (emulated) GPU, no K3 on either target.
  std::thread tg([&] {
    g = run_vm("gpu", {"hotloop=5", "specialize=0", "async=0", "kcache=0"}, "", loop("x * 0.25 + x * x"));
  });
  ta.join();
  tc.join();
  tg.join();
  ::unsetenv("TESSERA_GPU_EMULATION");
  ::unsetenv("TESSERA_CACHE_DIR");
  for (const Outcome* o : {&a, &c, &g}) {
    EXPECT_EQ(o->error, "");
    EXPECT_EQ(o->out, "true\n");
  }
  const CpuKernels ka = cpu_kernels(a.stats), kc = cpu_kernels(c.stats), kg = cpu_kernels(g.stats);
  // Each VM's counters hold its own loop's calls (at most 60), on its own devices.
  EXPECT_GT(ka.calls(), 0) << a.stats;
  EXPECT_LE(ka.calls(), 60) << a.stats;
  EXPECT_GT(kc.calls(), 0) << c.stats;
  EXPECT_LE(kc.calls(), 60) << c.stats;
  EXPECT_EQ(kg.calls(), 0) << g.stats;  // G's calls ran on its GPU
  EXPECT_NE(g.stats.find("fused calls on the device"), std::string::npos) << g.stats;
  EXPECT_EQ(a.stats.find("  gpu:"), std::string::npos) << a.stats;
  EXPECT_EQ(c.stats.find("  gpu:"), std::string::npos) << c.stats;
  // Its own parameters: A tunes K3 kernels, C never does.
  EXPECT_GE(ka.k3, 1) << a.stats;
  EXPECT_GT(ka.k3_runs, 0) << a.stats;
  EXPECT_EQ(kc.k3, 0) << c.stats;
  EXPECT_EQ(kc.k3_runs, 0) << c.stats;
  // Its own cache: A's, C's off.
  EXPECT_NE(a.stats.find("kernel cache " + cache.string()), std::string::npos) << a.stats;
  EXPECT_NE(c.stats.find("kernel cache off"), std::string::npos) << c.stats;
  // Its own dump: A's kernels, none of the others'.
  const std::string kir = files_text(dump, ".kir");
  EXPECT_NE(kir.find("tanh"), std::string::npos);
  EXPECT_EQ(kir.find("sigmoid"), std::string::npos);
  EXPECT_EQ(kir.find("// %2 = mul(%0, %0)"), std::string::npos);
  fs::remove_all(base);
}

}  // namespace
