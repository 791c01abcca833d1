// Every row of optimizer/fold_rules.def, applied: one case per rule, each a
// small trace in which that rule (and no earlier row) matches the last
// instruction, with the value FoldPass leaves in its place. A coverage test
// reads the .def itself, so a rule added there without a case here fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "optimizer/fold.h"
#include "tracer/trace_ir.h"

namespace tessera::jit {
namespace {

// Each rule spelled as its row: "OP LEFT RIGHT RESULT".
const std::vector<std::string> kDefRows = {
#define FOLD(op, l, r, res) #op " " #l " " #r " " #res,
#include "optimizer/fold_rules.def"
#undef FOLD
};

// The trace every case starts with: an int, a float and a bool of unknown
// value (slots 0, 1, 2; named x, y and b in the expectations).
constexpr const char* kPrelude =
    "0000 >  int  SLOAD  0  0  #0\n"
    "0001 >  flt  SLOAD  1  0  #0\n"
    "0002 >  bool SLOAD  2  0  #0\n";
constexpr IRRef kFirstCaseRef = 3;

struct FoldCase {
  const char* rule;                 // the row of fold_rules.def this case applies
  std::vector<const char*> lines;   // instructions from 0003 on, without their number
  const char* result;               // what the last one folds to (describe() below)
};
// (Constants are interned: a rule on two equal constants uses one twice.
// Such a case still matches its kint/kflt/kbool row before any `same` row.)

// Describes the value at `r` independently of numbering: x, y, b for the
// prelude's loads, "KINT 7" / "KFLOAT 2.5" / "KBOOL true" for constants,
// "OP(a, b)" for anything else.
std::string describe(const TraceIR& ir, IRRef r) {
  const IRIns& in = ir[r];
  if (in.op == IROp::SLOAD && in.op1 <= 2) return std::string(1, "xyb"[in.op1]);
  if (in.op == IROp::KINT) return "KINT " + std::to_string(ir.const_int(r));
  if (in.op == IROp::KBOOL) return in.op1 ? "KBOOL true" : "KBOOL false";
  if (in.op == IROp::KFLOAT) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "KFLOAT %.17g%s", ir.const_float(r), ir.is_converted_int(r) ? " int" : "");
    return buf;
  }
  const IROpInfo& info = ir_op_info(in.op);
  std::string s = std::string(info.name) + "(";
  if (info.op1 == OperandKind::ref) s += describe(ir, in.op1);
  if (info.op2 == OperandKind::ref) s += ", " + describe(ir, in.op2);
  return s + ")";
}

// The trace for a case: the prelude, the case's lines, and an EXIT whose
// snapshot keeps the last line's value in slot 3.
std::string case_ir(const FoldCase& c) {
  std::string text = kPrelude;
  IRRef r = kFirstCaseRef;
  for (const char* line : c.lines) {
    char num[16];
    std::snprintf(num, sizeof num, "%04u    ", r++);
    text += num;
    text += line;
    text += "\n";
  }
  char tail[160];
  std::snprintf(tail, sizeof tail,
                "%04u >  none EXIT    #1\n"
                "SNAP #0 ir=0000 pc=0 frames=[] []\n"
                "SNAP #1 ir=%04u pc=1 frames=[] [3=%04u]\n",
                r, r, r - 1);
  return text + tail;
}

const FoldCase kCases[] = {
    // Integer arithmetic (wrapping).
    {"ADD kint kint eval", {"int  KINT   9223372036854775807", "int  KINT   1", "int  ADD    0003  0004"},
     "KINT -9223372036854775808"},
    {"ADD any zero left", {"int  KINT   0", "int  ADD    0000  0003"}, "x"},
    {"ADD zero any right", {"int  KINT   0", "int  ADD    0003  0000"}, "x"},
    {"SUB kint kint eval", {"int  KINT   3", "int  KINT   10", "int  SUB    0003  0004"}, "KINT -7"},
    {"SUB any zero left", {"int  KINT   0", "int  SUB    0000  0003"}, "x"},
    {"SUB any same kint0", {"int  SUB    0000  0000"}, "KINT 0"},
    {"MUL kint kint eval", {"int  KINT   4611686018427387905", "int  KINT   4", "int  MUL    0003  0004"},
     "KINT 4"},
    {"MUL any one left", {"int  KINT   1", "int  MUL    0000  0003"}, "x"},
    {"MUL one any right", {"int  KINT   1", "int  MUL    0003  0000"}, "x"},
    {"MUL any zero kint0", {"int  KINT   0", "int  MUL    0000  0003"}, "KINT 0"},
    {"MUL zero any kint0", {"int  KINT   0", "int  MUL    0003  0000"}, "KINT 0"},
    {"NEG kint none eval", {"int  KINT   -9223372036854775808", "int  NEG    0003"}, "KINT -9223372036854775808"},
    {"NEG inv none inner", {"int  NEG    0000", "int  NEG    0003"}, "x"},
    {"IMIN kint kint eval", {"int  KINT   -3", "int  KINT   5", "int  IMIN   0003  0004"}, "KINT -3"},
    {"IMIN any same left", {"int  IMIN   0000  0000"}, "x"},
    {"IMAX kint kint eval", {"int  KINT   -3", "int  KINT   5", "int  IMAX   0003  0004"}, "KINT 5"},
    {"IMAX any same left", {"int  IMAX   0000  0000"}, "x"},

    // Float arithmetic (IEEE doubles).
    {"FADD kflt kflt eval", {"flt  KFLOAT 0.1", "flt  KFLOAT 0.2", "flt  FADD   0003  0004"},
     "KFLOAT 0.30000000000000004"},
    {"FSUB kflt kflt eval", {"flt  KFLOAT 1.5", "flt  KFLOAT 4.0", "flt  FSUB   0003  0004"}, "KFLOAT -2.5"},
    {"FSUB any fzero left", {"flt  KFLOAT 0.0", "flt  FSUB   0001  0003"}, "y"},
    {"FMUL kflt kflt eval", {"flt  KFLOAT 1e+300", "flt  FMUL   0003  0003"},
     "KFLOAT inf"},
    {"FMUL any fone left", {"flt  KFLOAT 1.0", "flt  FMUL   0001  0003"}, "y"},
    {"FMUL fone any right", {"flt  KFLOAT 1.0", "flt  FMUL   0003  0001"}, "y"},
    {"FDIV any fone left", {"flt  KFLOAT 1.0", "flt  FDIV   0001  0003"}, "y"},
    {"FNEG kflt none eval", {"flt  KFLOAT 0.0", "flt  FNEG   0003"}, "KFLOAT -0"},
    {"FNEG inv none inner", {"flt  FNEG   0001", "flt  FNEG   0003"}, "y"},
    {"CONV kint none eval", {"int  KINT   9007199254740993", "flt  CONV   0003"}, "KFLOAT 9007199254740992 int"},
    {"F32RND kflt none eval", {"flt  KFLOAT 0.1", "flt  F32RND 0003"}, "KFLOAT 0.10000000149011612"},
    {"F32RND inv none left", {"flt  F32RND 0001", "flt  F32RND 0003"}, "F32RND(y)"},

    // Comparisons: ints, floats, bools, and a value with itself.
    {"LT kint kint eval", {"int  KINT   -1", "int  KINT   2", "bool LT     0003  0004"}, "KBOOL true"},
    {"LT kflt kflt eval", {"flt  KFLOAT 2.5", "bool LT     0003  0003"}, "KBOOL false"},
    {"LT any same kfalse", {"bool LT     0000  0000"}, "KBOOL false"},
    {"LE kint kint eval", {"int  KINT   2", "bool LE     0003  0003"}, "KBOOL true"},
    {"LE kflt kflt eval", {"flt  KFLOAT 3.5", "flt  KFLOAT -1.0", "bool LE     0003  0004"}, "KBOOL false"},
    {"LE any same ktrue", {"bool LE     0000  0000"}, "KBOOL true"},
    {"GT kint kint eval", {"int  KINT   5", "int  KINT   -5", "bool GT     0003  0004"}, "KBOOL true"},
    {"GT kflt kflt eval", {"flt  KFLOAT nan", "flt  KFLOAT 1.0", "bool GT     0003  0004"}, "KBOOL false"},
    {"GT any same kfalse", {"bool GT     0000  0000"}, "KBOOL false"},
    {"GE kint kint eval", {"int  KINT   -3", "int  KINT   4", "bool GE     0003  0004"}, "KBOOL false"},
    {"GE kflt kflt eval", {"flt  KFLOAT 0.0", "flt  KFLOAT -0.0", "bool GE     0003  0004"}, "KBOOL true"},
    {"GE any same ktrue", {"bool GE     0000  0000"}, "KBOOL true"},
    {"EQ kint kint eval", {"int  KINT   7", "bool EQ     0003  0003"}, "KBOOL true"},
    {"EQ kflt kflt eval", {"flt  KFLOAT nan", "bool EQ     0003  0003"}, "KBOOL false"},
    {"EQ kbool kbool eval", {"bool KBOOL  true", "bool KBOOL  false", "bool EQ     0003  0004"}, "KBOOL false"},
    {"EQ any same ktrue", {"bool EQ     0002  0002"}, "KBOOL true"},
    {"NE kint kint eval", {"int  KINT   7", "int  KINT   8", "bool NE     0003  0004"}, "KBOOL true"},
    {"NE kflt kflt eval", {"flt  KFLOAT 0.0", "flt  KFLOAT -0.0", "bool NE     0003  0004"}, "KBOOL false"},
    {"NE kbool kbool eval", {"bool KBOOL  true", "bool NE     0003  0003"}, "KBOOL false"},
    {"NE any same kfalse", {"bool NE     0002  0002"}, "KBOOL false"},
    {"ULT kint kint eval", {"int  KINT   -1", "int  KINT   5", "bool ULT    0003  0004"}, "KBOOL false"},
    {"ULT any same kfalse", {"bool ULT    0000  0000"}, "KBOOL false"},
    {"NOT kbool none eval", {"bool KBOOL  true", "bool NOT    0003"}, "KBOOL false"},
    {"NOT inv none inner", {"bool NOT    0002", "bool NOT    0003"}, "b"},
};

// GoogleTest names a failing case by its rule, not its bytes.
void PrintTo(const FoldCase& c, std::ostream* os) { *os << c.rule; }

class FoldRule : public ::testing::TestWithParam<FoldCase> {};

TEST_P(FoldRule, AppliesWhereItsPatternsMatch) {
  const FoldCase& c = GetParam();
  const std::string in = case_ir(c);
  TraceIR ir = parse_ir(in);
  FoldPass fold;
  EXPECT_TRUE(fold.run(ir)) << in;
  const std::string out = print_ir(ir);
  // The snapshot's slot 3 held the folded instruction; it now holds what
  // the rule made of it.
  const Snapshot& exit = ir.snapshots().at(1);
  ASSERT_EQ(exit.entries.size(), 1u) << out;
  EXPECT_EQ(describe(ir, exit.entries[0].ref), c.result) << "in:\n" << in << "out:\n" << out;
  // Folding again finds nothing: the result is a fixed point, and it is
  // well-formed IR that prints back the same.
  TraceIR again = parse_ir(out);
  EXPECT_FALSE(fold.run(again)) << out;
  EXPECT_EQ(print_ir(again), out);
}

std::string rule_name(const ::testing::TestParamInfo<FoldCase>& info) {
  std::string name = info.param.rule;
  std::replace(name.begin(), name.end(), ' ', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(FoldRulesDef, FoldRule, ::testing::ValuesIn(kCases), rule_name);

// Each row of fold_rules.def has exactly one case above, and each case names
// a row (the rows are distinct, so this also checks the counts match).
TEST(FoldRules, EveryRowOfTheDefHasACase) {
  std::vector<std::string> cases;
  for (const FoldCase& c : kCases) cases.emplace_back(c.rule);
  for (const std::string& row : kDefRows)
    EXPECT_EQ(std::count(cases.begin(), cases.end(), row), 1) << "fold_rules.def row without one case: " << row;
  for (const std::string& c : cases)
    EXPECT_EQ(std::count(kDefRows.begin(), kDefRows.end(), c), 1) << "case for no (or a repeated) row: " << c;
  EXPECT_EQ(cases.size(), kDefRows.size());
}

}  // namespace
}  // namespace tessera::jit
