// CompileWorker: the background LLVM thread yields to the program's own
// thread (a lower priority), so that on a machine whose cores are busy the
// JIT's compiling ahead does not make the program slower than interpreting.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "runtime/compile_worker.h"

namespace tessera::jit {
namespace {

std::set<long> thread_ids() {
  std::set<long> ids;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ids.insert(std::stol(e.path().filename()));
  return ids;
}

int nice_of(long tid) { return getpriority(PRIO_PROCESS, static_cast<id_t>(tid)); }

TEST(CompileWorker, ItsThreadIsNicerThanTheProgramsOwn) {
  const std::set<long> before = thread_ids();
  const int mine = nice_of(gettid());
  const int want = std::min(mine + CompileWorker::kNice, 19);
  CompileWorker worker(std::chrono::milliseconds(0));
  long tid = -1;
  int seen = mine;
  // The thread lowers its own priority as it starts: wait for it (bounded).
  for (int i = 0; i < 5000 && seen != want; ++i) {
    for (long t : thread_ids())
      if (!before.count(t)) tid = t;
    if (tid >= 0) seen = nice_of(tid);
    if (seen != want) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_GE(tid, 0) << "no worker thread";
  EXPECT_EQ(seen, want);
  EXPECT_EQ(nice_of(gettid()), mine);  // the program's thread keeps its priority
}

}  // namespace
}  // namespace tessera::jit
