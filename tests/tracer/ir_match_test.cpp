// EXPECT_IR_EQ (tests/tracer/ir_match.h): IR texts match up to a consistent,
// one-to-one renaming of value numbers, and in nothing else.
#include "tests/tracer/ir_match.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera::jit::irtest {
namespace {

const char* kPrinted =
    "0000    int  KINT   1234\n"
    "0001 >  int  SLOAD  1  0  #0\n"
    "0002    int  ADD    0001  0000\n"
    "0003 >  none EXIT    #1\n"
    "SNAP #0 ir=0001 pc=5 frames=[] []\n"
    "SNAP #1 ir=0003 pc=6 frames=[] [1=0002 2=0001]\n";

// The same trace with the values numbered 10, 11, 12, 13 and 0000 for the
// constant: every use follows the renaming.
const char* kRenamed =
    "0010    int  KINT   1234\n"
    "0011 >  int  SLOAD  1  0  #0\n"
    "0012    int  ADD    0011  0010\n"
    "0000 >  none EXIT    #1\n"
    "SNAP #0 ir=0011 pc=5 frames=[] []\n"
    "SNAP #1 ir=0000 pc=6 frames=[] [1=0012 2=0011]\n";

::testing::AssertionResult match(const std::string& actual, const std::string& expected) {
  return ir_texts_match("actual", "expected", actual, expected);
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(IrMatch, IdenticalTextsMatch) { EXPECT_TRUE(match(kPrinted, kPrinted)); }

TEST(IrMatch, AConsistentRenamingMatches) {
  EXPECT_TRUE(match(kPrinted, kRenamed));
  EXPECT_TRUE(match(kRenamed, kPrinted));
  EXPECT_IR_EQ(std::string(kPrinted), kRenamed);
}

TEST(IrMatch, AnInconsistentUseDoesNot) {
  // ADD's first operand is the constant where the definition said SLOAD.
  EXPECT_FALSE(match(kPrinted, replace(kRenamed, "ADD    0011  0010", "ADD    0010  0010")));
  // A snapshot entry names another value.
  EXPECT_FALSE(match(kPrinted, replace(kRenamed, "1=0012", "1=0011")));
  // The snapshot's ir= names another instruction.
  EXPECT_FALSE(match(kPrinted, replace(kRenamed, "ir=0011 pc=5", "ir=0012 pc=5")));
}

TEST(IrMatch, TwoValuesCannotShareANumber) {
  // Expected numbers 0010 and 0011 both for actual 0000 / 0001: the renaming
  // must be one-to-one both ways.
  const std::string two_names_for_one = replace(kRenamed, "0011 >  int  SLOAD", "0010 >  int  SLOAD");
  EXPECT_FALSE(match(kPrinted, two_names_for_one));
  EXPECT_FALSE(match(two_names_for_one, kPrinted));
}

TEST(IrMatch, EverythingButValueNumbersMustBeEqual) {
  // Literals are not value numbers: KINT 1234 is not renamed to 1235.
  EXPECT_FALSE(match(kPrinted, replace(kPrinted, "KINT   1234", "KINT   1235")));
  // Slot literals, opcodes, types, snapshot numbers, pcs, slots, spacing.
  EXPECT_FALSE(match(kPrinted, replace(kPrinted, "SLOAD  1  0", "SLOAD  2  0")));
  EXPECT_FALSE(match(kPrinted, replace(kPrinted, "ADD ", "SUB ")));
  EXPECT_FALSE(match(kPrinted, replace(kPrinted, "int  ADD", "flt  ADD")));
  EXPECT_FALSE(match(kPrinted, replace(kPrinted, "EXIT    #1", "EXIT    #0")));
  EXPECT_FALSE(match(kPrinted, replace(kPrinted, "pc=6", "pc=7")));
  EXPECT_FALSE(match(kPrinted, replace(kPrinted, "2=0001", "3=0001")));
  EXPECT_FALSE(match(kPrinted, replace(kPrinted, "ADD    0001", "ADD   0001")));
  // A missing or an extra line, and a missing final newline.
  const std::string printed = kPrinted;
  EXPECT_FALSE(match(printed, printed.substr(0, printed.rfind("SNAP #1"))));
  EXPECT_FALSE(match(printed, printed + "ASSUME global=0 value=0x1\n"));
  EXPECT_FALSE(match(printed, printed.substr(0, printed.size() - 1)));
}

TEST(IrMatch, TheFailureSaysWhichLineDiffers) {
  const ::testing::AssertionResult r = match(kPrinted, replace(kPrinted, "ADD ", "SUB "));
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("line 3"), std::string::npos) << r.message();
}

}  // namespace
}  // namespace tessera::jit::irtest
