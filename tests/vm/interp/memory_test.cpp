// Objects are freed promptly: a loop that makes a fresh 1 MiB tensor per
// iteration keeps peak RSS bounded (spec'd bound: 200 MiB). Runs in its own
// process so other tests do not raise the high-water mark.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include "tests/vm/interp/run_helper.h"

namespace tessera {
namespace {

long peak_rss_mib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024;  // ru_maxrss is in KiB on Linux
}

bool under_sanitizer() {
#if defined(__SANITIZE_ADDRESS__)
  return true;  // ASan's quarantine keeps freed memory mapped on purpose
#else
  return false;
#endif
}

TEST(Memory, FreshMiBTensorPerIterationKeepsRssBounded) {
  if (under_sanitizer()) GTEST_SKIP() << "RSS is not meaningful under AddressSanitizer";
  // 262144 f32 = 1 MiB per tensor; 10 000 iterations = ~10 GiB allocated in all.
  auto r = testing::run_script(
      "let total = 0.0\n"
      "for i in range(10000) {\n"
      "  let t = full([262144], 1.0)\n"
      "  total += t[i]\n"
      "}\n"
      "print(total)\n");
  ASSERT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_EQ(r.out, "10000.0\n");
  EXPECT_LT(peak_rss_mib(), 200);
}

TEST(Memory, FreshListsAndStringsPerIterationKeepRssBounded) {
  if (under_sanitizer()) GTEST_SKIP() << "RSS is not meaningful under AddressSanitizer";
  auto r = testing::run_script(
      "let n = 0\n"
      "for i in range(2000) {\n"
      "  let l = list(65536, 1.5)\n"
      "  let s = str(i) + \"-\" + str(len(l))\n"
      "  n += len(s)\n"
      "}\n"
      "print(n)\n");
  ASSERT_EQ(r.status, RunStatus::Ok) << r.err;
  EXPECT_LT(peak_rss_mib(), 200);
}

}  // namespace
}  // namespace tessera
