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
#include <vector>

#include "runtime/compile_worker.h"
#include "tracer/trace_ir.h"

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

// The order jobs finish in: newest first, and a job whose trace asked again
// (prioritize) before the rest. The delay holds the worker in its first job
// while the others are queued.
TEST(CompileWorker, RunsTheNewestJobFirstAndAPrioritizedOneBeforeThat) {
  const TraceIR ir = parse_ir(
      "0000 >  int  SLOAD  0  0  #0\n"
      "0001    none LOOP\n"
      "0002    none SSTORE 0  0000\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n");
  CompileWorker worker(std::chrono::milliseconds(100));
  auto job = [&](uint32_t id) {
    return CompileWorker::Job{id, &ir, "t" + std::to_string(id), {}, nullptr, nullptr, false};
  };
  worker.submit(job(1));
  // Wait (bounded) until the worker has taken job 1.
  for (int i = 0; i < 5000 && !worker.busy(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(worker.busy());
  worker.submit(job(2));
  worker.submit(job(3));
  worker.submit(job(4));
  worker.prioritize(2);
  worker.prioritize(9);  // no such job: nothing happens
  std::vector<uint32_t> order;
  for (int i = 0; i < 20000 && order.size() < 4; ++i) {
    for (const CompileResult& r : worker.take_finished()) {
      EXPECT_EQ(r.error, "") << "trace " << r.trace_id;
      order.push_back(r.trace_id);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(order, (std::vector<uint32_t>{1, 2, 4, 3}));
}

}  // namespace
}  // namespace tessera::jit
