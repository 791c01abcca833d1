// Two VMs in one process share no mutable state.
#include <gtest/gtest.h>

#include <thread>

#include "tests/vm/interp/run_helper.h"

namespace tessera {
namespace {

TEST(VMIsolation, GlobalsDoNotLeakBetweenVMs) {
  auto a = testing::run_script("let counter = 41\ncounter += 1\nprint(counter)\n");
  auto b = testing::run_script("print(counter)\n");
  EXPECT_EQ(a.out, "42\n");
  EXPECT_EQ(b.status, RunStatus::RuntimeError);
}

TEST(VMIsolation, ReassignedBuiltinOnlyAffectsItsVM) {
  auto a = testing::run_script("len = 5\nprint(len)\n");
  auto b = testing::run_script("print(len([1, 2]))\n");
  EXPECT_EQ(a.out, "5\n");
  EXPECT_EQ(b.out, "2\n");
}

TEST(VMIsolation, TwoVMsRunConcurrently) {
  const char* src =
      "fn fib(n) { if n < 2 { return n }\n return fib(n - 1) + fib(n - 2) }\n"
      "let t = zeros([4, 4])\nt[1, 2] = 3.0\nprint(fib(18), sum(t))\n";
  testing::RunResult r1, r2;
  std::thread t1([&] { r1 = testing::run_script(src); });
  std::thread t2([&] { r2 = testing::run_script(src); });
  t1.join();
  t2.join();
  EXPECT_EQ(r1.status, RunStatus::Ok) << r1.err;
  EXPECT_EQ(r1.out, r2.out);
}

}  // namespace
}  // namespace tessera
