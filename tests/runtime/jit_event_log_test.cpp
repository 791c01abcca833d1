// JitEventLog: the table's names are unique, found by name and documented; a line is
// "[jit MS] NAME key=value..." with texts quoted where they must be; the
// JSON lines carry the same fields typed; a kernel event with a name
// outside the table is a bug, reported; counts per kind; and an invalidated
// trace is logged by a run (the one event the CLI test's program lacks).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unistd.h>

#include "runtime/hotspot_observer.h"
#include "runtime/jit_event_log.h"
#include "tests/runtime/script_runner.h"

namespace tessera::jit {
namespace {

TEST(JitEventLog, NamesAreUniqueAndFoundByName) {
  std::set<std::string> names;
  for (size_t i = 0; i < kNumJitEvents; ++i) {
    const auto k = static_cast<JitEventKind>(i);
    EXPECT_TRUE(names.insert(jit_event_info(k).name).second) << jit_event_info(k).name;
    EXPECT_EQ(jit_event_by_name(jit_event_info(k).name), k);
    EXPECT_NE(std::string(jit_event_info(k).description), "");
  }
  EXPECT_FALSE(jit_event_by_name("trace.nope").has_value());
}

// docs/observability.md lists every event of the table.
TEST(JitEventLog, TheDocsListEveryEvent) {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/docs/observability.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), {});
  ASSERT_FALSE(doc.empty());
  for (size_t i = 0; i < kNumJitEvents; ++i) {
    const std::string name = jit_event_info(static_cast<JitEventKind>(i)).name;
    EXPECT_NE(doc.find("| `" + name + "` |"), std::string::npos) << name << " is not in docs/observability.md";
  }
}

TEST(JitEventLog, ALineIsTheTimeTheNameAndTheFields) {
  EXPECT_EQ(JitEventLog::line(12.3456, JitEventKind::TraceStop,
                              {{"trace", int64_t{3}}, {"at", std::string("a.tsb:4")}, {"link", std::string("trace 1")}}),
            "[jit 12.346] trace.stop trace=3 at=a.tsb:4 link=\"trace 1\"");
  EXPECT_EQ(JitEventLog::line(0, JitEventKind::TraceAbort,
                              {{"detail", std::string("say \"hi\"\nthere")}, {"empty", std::string()}, {"ms", 0.5}}),
            "[jit 0.000] trace.abort detail=\"say \\\"hi\\\"\\nthere\" empty=\"\" ms=0.500");
}

TEST(JitEventLog, JsonLinesCarryTheFieldsTypedAndKindsAreCounted) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("tessera-events-" + std::to_string(::getpid()) + ".jsonl");
  std::ostringstream text;
  {
    JitEventLog log;
    EXPECT_FALSE(log.on());
    log.write_jsonl(path.string());
    log.log_to(text);
    EXPECT_TRUE(log.on());
    log.emit(JitEventKind::TraceCompiled, {{"trace", int64_t{2}}, {"tier", int64_t{1}}, {"ms", 0.25}});
    log.emit(JitEventKind::KernelPromoted, {{"dims", std::string("100,?")}, {"device", std::string("cpu")}});
    EXPECT_EQ(log.count(JitEventKind::TraceCompiled), 1u);
    EXPECT_EQ(log.count(JitEventKind::KernelPromoted), 1u);
    EXPECT_EQ(log.count(JitEventKind::TraceStop), 0u);
  }
  std::ifstream in(path);
  std::string first, second, third;
  ASSERT_TRUE(std::getline(in, first) && std::getline(in, second));
  EXPECT_FALSE(std::getline(in, third));
  const auto a = nlohmann::json::parse(first), b = nlohmann::json::parse(second);
  EXPECT_EQ(a["event"], "trace.compiled");
  EXPECT_EQ(a["thread"], "vm");
  EXPECT_EQ(a["trace"], 2);
  EXPECT_EQ(a["ms"], 0.25);
  EXPECT_TRUE(a["time_ms"].is_number());
  EXPECT_EQ(b["event"], "kernel.k3");
  EXPECT_EQ(b["dims"], "100,?");
  EXPECT_NE(text.str().find("] kernel.k3 dims=100,? device=cpu\n"), std::string::npos) << text.str();
  std::filesystem::remove(path);
  EXPECT_THROW(JitEventLog().write_jsonl("/nonexistent-dir/events.jsonl"), std::runtime_error);
}

TEST(JitEventLog, AStoredGlobalThatTracesAssumedIsLogged) {
  std::ostringstream text;  // outlives the log, whose last flush writes to it
  auto log = std::make_shared<JitEventLog>();
  log->log_to(text);
  JitParams p;
  p.set("hotloop=2");
  p.set("async=0");
  HotspotObserver rt(p);
  rt.set_event_log(log);
  // run's trace assumes the function in `fun` (a global it never stores) is
  // constant; the store after it invalidates the trace.
  const testing::Outcome o = testing::run_script(
      "fn one() { return 1 }\nfn two() { return 2 }\nlet fun = one\n"
      "fn run() {\n  let s = 0\n  for i in range(100) { s += fun() }\n  return s\n}\n"
      "print(run())\nfun = two\nprint(run())\n",
      &rt, true);
  EXPECT_EQ(o.out, "100\n200\n");
  ASSERT_NE(rt.tracing(), nullptr);
  ASSERT_GT(rt.tracing()->stats().invalidated, 0u);
  EXPECT_EQ(log->count(JitEventKind::Invalidated), 1u) << text.str();
  EXPECT_NE(text.str().find("] trace.invalidated global="), std::string::npos) << text.str();
  EXPECT_EQ(log->count(JitEventKind::TraceStop), rt.tracing()->stats().recorded);
}

}  // namespace
}  // namespace tessera::jit
