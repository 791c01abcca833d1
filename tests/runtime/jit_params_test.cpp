// JitParams: defaults from jit_params.def, NAME=VALUE parsing, every error.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include <stdexcept>
#include <string>

#include "runtime/jit_params.h"

namespace tessera {
namespace {

// The message of the std::invalid_argument that set() throws, or "" if none.
std::string set_error(JitParams& p, std::string_view arg) {
  try {
    p.set(arg);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(JitParams, Defaults) {
  JitParams p;
  EXPECT_TRUE(p.enabled);
  EXPECT_EQ(p.hotloop, 56);
  EXPECT_EQ(p.hotcall, 112);
  EXPECT_EQ(p.hotexit, 10);
  EXPECT_EQ(p.maxrecord, 4000);
  EXPECT_EQ(p.maxtrace, 1000);
  EXPECT_EQ(p.maxside, 100);
  EXPECT_EQ(p.maxinline, 6);
  EXPECT_EQ(p.blacklist, 11);
  EXPECT_EQ(p.async, 1);
  EXPECT_EQ(p.tier, 0);  // auto
  EXPECT_EQ(p.tier2, 1000);
  EXPECT_EQ(p.opt, 1);
}

TEST(JitParams, TierAcceptsAutoAndItsNumbers) {
  JitParams p;
  p.set("tier=1");
  EXPECT_EQ(p.tier, 1);
  p.set("tier=auto");
  EXPECT_EQ(p.tier, 0);
  p.set("tier=2");
  EXPECT_EQ(p.tier, 2);
  EXPECT_NE(set_error(p, "tier=3").find("tier expects an integer in 0..2"), std::string::npos);
  EXPECT_NE(set_error(p, "tier2=auto").find("tier2 expects an integer"), std::string::npos);
  EXPECT_EQ(p.tier, 2);
}

TEST(JitParams, ListIsTableOrderWithCurrentValues) {
  JitParams p;
  p.set("maxside=7");
  auto l = p.list();
  ASSERT_EQ(l.size(), 34u);
  EXPECT_EQ(l.front(), (std::pair<std::string, int64_t>{"hotloop", 56}));
  bool found = false;
  for (const auto& [name, value] : l) {
    if (name == "maxside") {
      EXPECT_EQ(value, 7);
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(JitParams, SetAcceptsRangeBounds) {
  JitParams p;
  p.set("hotloop=1");
  EXPECT_EQ(p.hotloop, 1);
  p.set("hotloop=65535");
  EXPECT_EQ(p.hotloop, 65535);
  p.set("maxside=0");
  EXPECT_EQ(p.maxside, 0);
  p.set("hotcall=10");
  EXPECT_EQ(p.hotcall, 10);
  EXPECT_EQ(p.hotloop, 65535);  // other fields untouched
}

TEST(JitParams, UnknownNameListsKnownNames) {
  JitParams p;
  EXPECT_EQ(set_error(p, "foo=1"),
            "unknown JIT parameter 'foo' (known: hotloop, hotcall, hotexit, hotwork, maxrecord, maxtrace, "
            "maxside, maxsidetries, passregs, maxinline, blacklist, async, tier, tier2, t2delay, opt, peel, predicate, sink, fuse, "
            "specialize, k3time, k3calls, recompiles, gputune, tf32, cupti, kprofile, commtimeout, bucket, kcache, sinkmax, perfmap, "
            "verify)");
  EXPECT_NE(set_error(p, "=1").find("unknown JIT parameter ''"), std::string::npos);
  // Names are exact: no case folding, no prefixes.
  EXPECT_NE(set_error(p, "HOTLOOP=1").find("unknown JIT parameter 'HOTLOOP'"), std::string::npos);
  EXPECT_NE(set_error(p, "hot=1").find("unknown JIT parameter 'hot'"), std::string::npos);
}

TEST(JitParams, MissingEquals) {
  JitParams p;
  EXPECT_EQ(set_error(p, "hotloop"), "JIT parameter must be NAME=VALUE, got 'hotloop'");
  EXPECT_EQ(set_error(p, ""), "JIT parameter must be NAME=VALUE, got ''");
}

TEST(JitParams, BadValues) {
  JitParams p;
  const std::string want = "JIT parameter hotloop expects an integer in 1..65535, got ";
  EXPECT_EQ(set_error(p, "hotloop=x"), want + "'x'");
  EXPECT_EQ(set_error(p, "hotloop="), want + "''");
  EXPECT_EQ(set_error(p, "hotloop=0"), want + "'0'");
  EXPECT_EQ(set_error(p, "hotloop=65536"), want + "'65536'");
  EXPECT_EQ(set_error(p, "hotloop=-1"), want + "'-1'");
  EXPECT_EQ(set_error(p, "hotloop=10x"), want + "'10x'");
  EXPECT_EQ(set_error(p, "hotloop= 10"), want + "' 10'");
  EXPECT_EQ(set_error(p, "hotloop=+10"), want + "'+10'");
  EXPECT_EQ(set_error(p, "hotloop=1.5"), want + "'1.5'");
  EXPECT_EQ(set_error(p, "hotloop=0x10"), want + "'0x10'");
  EXPECT_EQ(set_error(p, "hotloop=99999999999999999999999"), want + "'99999999999999999999999'");
  EXPECT_EQ(set_error(p, "maxinline=101"),
            "JIT parameter maxinline expects an integer in 0..100, got '101'");
  // A failed set leaves the value unchanged.
  EXPECT_EQ(p.hotloop, 56);
  EXPECT_EQ(p.maxinline, 6);
}

TEST(JitParams, DescribeAllHasEveryParameterWithDefaultAndRange) {
  const std::string d = JitParams::describe_all();
  for (const auto& [name, value] : JitParams{}.list()) {
    EXPECT_NE(d.find(name), std::string::npos) << name;
  }
  EXPECT_NE(d.find("hotloop            56  1..65535"), std::string::npos) << d;
  EXPECT_NE(d.find("blacklist          11  1..1000"), std::string::npos) << d;
}

// docs/jit-params.md mirrors jit_params.def: every parameter has a row with
// the .def's default and range, and there are no rows for other names.
TEST(JitParams, DocsTableMatchesTheDefTable) {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/docs/jit-params.md");
  ASSERT_TRUE(in) << "docs/jit-params.md not found";
  std::map<std::string, std::pair<std::string, std::string>> rows;  // name -> (default cell, range cell)
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    for (std::string cell; std::getline(ss, cell, '|');) cells.push_back(cell.substr(1, cell.size() - 2));
    ASSERT_GE(cells.size(), 3u) << line;
    rows[cells[0].substr(1, cells[0].size() - 2)] = {cells[1], cells[2]};
  }
  size_t params = 0;
#define JIT_PARAM(name, def, lo, hi, desc)                                                         \
  ++params;                                                                                     \
  ASSERT_TRUE(rows.count(#name)) << "no row for " #name;                                         \
  EXPECT_EQ(rows[#name].first.substr(0, std::to_string(def).size()), std::to_string(def)) << #name; \
  EXPECT_EQ(rows[#name].second, std::to_string(lo) + ".." + std::to_string(hi)) << #name;
#include "runtime/jit_params.def"
#undef JIT_PARAM
  EXPECT_EQ(rows.size(), params) << "a row names no parameter";
}

}  // namespace
}  // namespace tessera
