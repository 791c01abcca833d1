// Number loads end to end (optimizer/number_load.h): loops over lists whose
// elements mix ints and floats give the interpreter's results in both host
// tiers, also where an element is neither (the load's guard exits and the
// interpreter raises the error) and where two such elements meet.
#include <gtest/gtest.h>

#include <string>

#include "runtime/hotspot_observer.h"
#include "tests/runtime/script_runner.h"

namespace tessera {
namespace {

using testing::expect_same_in_tier;

// Rows of ints and floats; the product's inner loop, while the left factor
// is a float, loads both elements as numbers and takes no exit per element.
const char* kProduct =
    "fn mixed(n) {\n"
    "  let m = []\n"
    "  for i in range(n) {\n"
    "    let row = []\n"
    "    for j in range(n) { if (i + j) % 2 == 0 { push(row, i - j) } else { push(row, (i + j) * 0.25) } }\n"
    "    push(m, row)\n"
    "  }\n"
    "  return m\n"
    "}\n"
    "fn matmul(a, b) {\n"
    "  let n = len(a)\n"
    "  let c = []\n"
    "  for i in range(n) {\n"
    "    let row = list(n, 0)\n"
    "    for k in range(n) {\n"
    "      let aik = a[i][k]\n"
    "      let bk = b[k]\n"
    "      for j in range(n) { row[j] = row[j] + aik * bk[j] }\n"
    "    }\n"
    "    push(c, row)\n"
    "  }\n"
    "  return c\n"
    "}\n"
    "let m = mixed(40)\n"
    "let p = matmul(m, m)\n"
    "let s = 0.0\n"
    "for i in range(40) { for j in range(40) { s = s + p[i][j] * (i + 1) } }\n"
    "print(s, p[3][5], p[4][4], type(p[4][4]), p[0][1])\n";

TEST(NumberLoadRuntime, AMixedProductGivesTheInterpretersResultsAndUsesNumberLoads) {
  for (const char* tier : {"1", "2"}) {
    SCOPED_TRACE(std::string("tier=") + tier);
    auto rt = expect_same_in_tier(kProduct, tier);
    EXPECT_TRUE(testing::any_trace_has_op(*rt, jit::IROp::LLOADN));
  }
}

TEST(NumberLoadRuntime, AnElementThatIsNoNumberLeavesAtTheLoadAndRaisesThere) {
  for (const char* tier : {"1", "2"}) {
    SCOPED_TRACE(std::string("tier=") + tier);
    auto rt = expect_same_in_tier(
        "fn total(xs, f) {\n"
        "  let s = 0.0\n"
        "  for i in range(len(xs)) { s = s + f * xs[i] }\n"
        "  return s\n"
        "}\n"
        "let xs = []\n"
        "for i in range(200) { if i % 2 == 0 { push(xs, i) } else { push(xs, i * 0.5) } }\n"
        "print(total(xs, 0.5))\n"
        "xs[150] = \"x\"\n"
        "print(total(xs, 0.5))\n",
        tier);
    EXPECT_TRUE(testing::any_trace_has_op(*rt, jit::IROp::LLOADN));
  }
}

TEST(NumberLoadRuntime, TwoElementsThatAreBothIntsStayAnInt) {
  // xs[i] * ys[i]: one of the two loads may become a number load, not both;
  // where both are ints the product is an int (printed without a point).
  for (const char* tier : {"1", "2"}) {
    SCOPED_TRACE(std::string("tier=") + tier);
    auto rt = expect_same_in_tier(
        "fn dot(xs, ys) {\n"
        "  let out = []\n"
        "  for i in range(len(xs)) { push(out, xs[i] * ys[i] + 0.0) }\n"
        "  return out\n"
        "}\n"
        "let xs = []\n"
        "let ys = []\n"
        "for i in range(300) {\n"
        "  if i % 3 == 0 { push(xs, i) } else { push(xs, i * 0.5) }\n"
        "  if i % 5 == 0 { push(ys, i) } else { push(ys, i * 0.25) }\n"
        "}\n"
        "let d = dot(xs, ys)\n"
        "print(d[0], d[15], d[16], d[299])\n"
        "let t = 0\n"
        "for i in range(300) { t = t + xs[i] * ys[i] }\n"
        "print(t)\n",
        tier);
    EXPECT_TRUE(testing::any_trace_has_op(*rt, jit::IROp::LLOADN));
  }
}

// Rows whose entries alternate floats and ints, summed with a float factor:
// whichever element the recording starts at (two rows, opposite parities,
// so one of them starts at a float), the loop loads both kinds as numbers
// and no element load ever leaves its trace.
TEST(NumberLoadRuntime, AFloatOfARowOfAlternatingNumbersIsANumberLoad) {
  for (const char* tier : {"1", "2"}) {
    SCOPED_TRACE(std::string("tier=") + tier);
    auto rt = expect_same_in_tier(
        "fn total(xs, f) {\n"
        "  let s = 0.0\n"
        "  for i in range(len(xs)) { s = s + f * xs[i] }\n"
        "  return s\n"
        "}\n"
        "let a = []\n"
        "let b = []\n"
        "for i in range(300) {\n"
        "  if i % 2 == 0 { push(a, i * 0.5); push(b, i) } else { push(a, i); push(b, i * 0.5) }\n"
        "}\n"
        "let s = 0.0\n"
        "for r in range(4) { s = s + total(a, 1.5) + total(b, 0.25) }\n"
        "print(s)\n",
        tier);
    for (const auto& t : rt->tracing()->traces()) {
      for (const jit::IRIns& in : t->ir.instructions()) {
        if ((in.op == jit::IROp::LLOAD || in.op == jit::IROp::LLOADN) && in.snap < t->exits.size()) {
          EXPECT_EQ(t->exits[in.snap], 0u) << "trace " << t->id << " leaves at an element load";
        }
      }
    }
  }
}

}  // namespace
}  // namespace tessera
