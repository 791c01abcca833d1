// Blacklist: roots whose recordings keep aborting wait twice as long after
// each abort before they get hot again, and after `blacklist` aborts are no
// longer recorded; loops and function entries of one function are apart.
#include <gtest/gtest.h>

#include "tracer/blacklist.h"

namespace tessera::jit {
namespace {

FunctionProto proto_with_code(size_t instructions) {
  FunctionProto p;
  p.code.resize(instructions);
  p.hotcounts.assign(instructions, 0);
  return p;
}

TEST(Blacklist, EachAbortDoublesTheWaitUntilTheRootIsBlacklisted) {
  FunctionProto p = proto_with_code(8);
  Blacklist b(Blacklist::Params{.blacklist = 3, .hotloop = 10, .hotcall = 7});
  const RootKey loop = RootKey::loop(&p, 5);
  EXPECT_FALSE(b.contains(loop));
  EXPECT_FALSE(b.aborted(loop));
  EXPECT_EQ(p.hotcounts[5], 20);  // hotloop << 1
  EXPECT_FALSE(b.aborted(loop));
  EXPECT_EQ(p.hotcounts[5], 40);
  EXPECT_FALSE(b.contains(loop));
  EXPECT_TRUE(b.aborted(loop));  // the third abort blacklists it, once
  EXPECT_TRUE(b.contains(loop));
  EXPECT_FALSE(b.aborted(loop));
  EXPECT_EQ(b.aborts(loop), 4u);
  EXPECT_EQ(p.entry_hotcount, 0u);  // the function's entry is another root
}

TEST(Blacklist, LoopsAndTheFunctionEntryAreSeparateRoots) {
  FunctionProto p = proto_with_code(8);
  Blacklist b(Blacklist::Params{.blacklist = 1, .hotloop = 10, .hotcall = 7});
  EXPECT_TRUE(b.aborted(RootKey::function(&p)));
  EXPECT_EQ(p.entry_hotcount, 14u);  // hotcall << 1
  EXPECT_TRUE(b.contains(RootKey::function(&p)));
  // Not a loop at pc 0, nor any other function's entry.
  EXPECT_FALSE(b.contains(RootKey::loop(&p, 0)));
  FunctionProto other = proto_with_code(8);
  EXPECT_FALSE(b.contains(RootKey::function(&other)));
  EXPECT_EQ(b.aborts(RootKey::loop(&p, 0)), 0u);
}

TEST(Blacklist, TheBackOffIsCappedAtWhatTheCountersHold) {
  FunctionProto p = proto_with_code(4);
  Blacklist b(Blacklist::Params{.blacklist = 1000, .hotloop = 56, .hotcall = 112});
  for (int i = 0; i < 40; ++i) {
    b.aborted(RootKey::loop(&p, 3));
    b.aborted(RootKey::function(&p));
  }
  EXPECT_EQ(p.hotcounts[3], 65535);
  EXPECT_EQ(p.entry_hotcount, 65535u);
  EXPECT_FALSE(b.contains(RootKey::loop(&p, 3)));
}

TEST(Blacklist, APcPastTheCountersIsCountedButSetsNoCounter) {
  FunctionProto p = proto_with_code(2);
  Blacklist b(Blacklist::Params{.blacklist = 1, .hotloop = 10, .hotcall = 7});
  EXPECT_TRUE(b.aborted(RootKey::loop(&p, 9)));
  EXPECT_TRUE(b.contains(RootKey::loop(&p, 9)));
  EXPECT_EQ(p.hotcounts, (std::vector<uint16_t>{0, 0}));
}

// A blacklisted root is retried after a cool-down of refused hot reports
// that doubles each round; a retry that aborts blacklists it again without
// reporting it again.
TEST(Blacklist, ABlacklistedRootIsRetriedAfterACoolDownThatDoubles) {
  FunctionProto p = proto_with_code(4);
  Blacklist b(Blacklist::Params{.blacklist = 2, .hotloop = 10, .hotcall = 7});
  const RootKey loop = RootKey::loop(&p, 1);
  EXPECT_FALSE(b.refused(loop));  // not blacklisted: nothing to cool down
  b.aborted(loop);
  EXPECT_TRUE(b.aborted(loop));
  for (uint32_t i = 1; i < Blacklist::kCooldownWaits; ++i) {
    EXPECT_FALSE(b.refused(loop));
    EXPECT_EQ(p.hotcounts[1], 65535);  // the longest wait the counter holds
    EXPECT_TRUE(b.contains(loop));
  }
  EXPECT_TRUE(b.refused(loop));
  EXPECT_FALSE(b.contains(loop));
  EXPECT_EQ(b.retries(loop), 1u);
  EXPECT_FALSE(b.aborted(loop));  // blacklisted again, not reported again
  EXPECT_TRUE(b.contains(loop));
  for (uint32_t i = 1; i < 2 * Blacklist::kCooldownWaits; ++i) EXPECT_FALSE(b.refused(loop));
  EXPECT_TRUE(b.refused(loop));
  EXPECT_EQ(b.retries(loop), 2u);
}

}  // namespace
}  // namespace tessera::jit
