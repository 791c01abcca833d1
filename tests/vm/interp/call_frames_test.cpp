// CallFrameStack: the frame array compiled code pushes and pops in place.
#include <gtest/gtest.h>

#include "vm/interp/call_frames.h"

namespace tessera {
namespace {

TEST(CallFrameStack, ASentinelWithoutAFunctionLiesBelowFrameZero) {
  // RETGUARD reads "the caller of the top frame" unconditionally; with one
  // frame that is the sentinel, which matches no function.
  CallFrameStack frames(4, 1);
  frames.push_back(CallFrame{nullptr, nullptr, 7});
  const CallFrame* below = frames.region().top - 2;
  EXPECT_EQ(below, frames.region().bottom - 1);
  EXPECT_EQ(below->proto, nullptr);
  EXPECT_EQ(below->pc, nullptr);
  EXPECT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].base, 7u);
}

TEST(CallFrameStack, DepthLimitAndSlackAreCountedFromFrameZero) {
  CallFrameStack frames(2, 1);
  EXPECT_EQ(frames.region().limit - frames.region().bottom, 2);
  for (uint32_t i = 0; i < 3; ++i) frames.push_back(CallFrame{nullptr, nullptr, i});
  EXPECT_THROW(frames.push_back(CallFrame{}), RuntimeError);  // past the slack
  EXPECT_EQ(frames.back().base, 2u);
}

}  // namespace
}  // namespace tessera
