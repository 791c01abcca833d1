// The optimizer pipeline: it runs the rows of optimizer/passes.def that its
// options switch on, in that order, and docs/jit.md lists them so; and on a
// loop trace as the recorder writes it (the shape of nbody's inner loop: a
// global list read and written at the loop index, with a bounds check per
// access).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "optimizer/pipeline.h"
#include "runtime/jit_params.h"
#include "tests/optimizer/pass_test_support.h"

namespace tessera::jit {
namespace {

// The JIT parameters by name (passes.def's SWITCH column names them).
const std::map<std::string, int64_t JitParams::*>& param_fields() {
  static const std::map<std::string, int64_t JitParams::*> fields = {
#define JIT_PARAM(name, def, lo, hi, desc) {#name, &JitParams::name},
#include "runtime/jit_params.def"
#undef JIT_PARAM
  };
  return fields;
}

// The passes.def rows that `params` switch on.
std::vector<std::string> switched_on(const JitParams& params) {
  std::vector<std::string> names;
  for (const TracePipeline::Row& row : TracePipeline::rows())
    if (row.enabled_by.empty() || params.*param_fields().at(row.enabled_by) != 0) names.push_back(row.name);
  return names;
}

TEST(TracePipeline, RunsTheRowsOfPassesDefThatItsParametersSwitchOn) {
  ASSERT_FALSE(TracePipeline::rows().empty());
  for (const TracePipeline::Row& row : TracePipeline::rows()) {
    if (row.enabled_by.empty()) continue;
    ASSERT_TRUE(param_fields().count(row.enabled_by)) << row.enabled_by;
  }
  const JitParams defaults;
  EXPECT_EQ(TracePipeline(TracePipeline::Options(defaults)).pass_names(), switched_on(defaults));
  // Each switch on its own, flipped.
  for (const TracePipeline::Row& row : TracePipeline::rows()) {
    if (row.enabled_by.empty()) continue;
    JitParams p;
    p.*param_fields().at(row.enabled_by) = p.*param_fields().at(row.enabled_by) != 0 ? 0 : 1;
    EXPECT_EQ(TracePipeline(TracePipeline::Options(p)).pass_names(), switched_on(p)) << row.enabled_by;
  }
}

TEST(TracePipeline, StepNamesAndAfterPassCallback) {
  TracePipeline p(passtest::default_options());
  TraceIR ir = parse_ir(
      "0000 >  int  SLOAD  0  0  #0\n"
      "0001 >  none EXIT    #0\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n");
  // The callback also sees the inner steps: tensor sinking's own result,
  // then its inner fold (the dumps .N-tsink.ir and .N+1-tsink.fold.ir).
  std::vector<std::string> steps = p.step_names();
  const auto tsink = std::find(steps.begin(), steps.end(), "tsink");
  ASSERT_NE(tsink, steps.end());
  ASSERT_NE(tsink + 1, steps.end());
  EXPECT_EQ(*(tsink + 1), "tsink.fold");
  steps.erase(tsink + 1);
  EXPECT_EQ(steps, p.pass_names());
  TracePipeline::Options no_sinking = passtest::default_options();
  no_sinking.sink = false;
  EXPECT_EQ(TracePipeline(no_sinking).step_names(), TracePipeline(no_sinking).pass_names());
  std::vector<std::string> seen;
  p.run(ir, [&](const char* pass, const TraceIR&) { seen.emplace_back(pass); });
  EXPECT_EQ(seen, p.step_names());
}

std::string read_doc(const char* path) {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/" + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// docs/jit.md's pipeline line names every row of passes.def in order, with
// the passes that are off by default in brackets ([peel]).
TEST(TracePipeline, DocsPipelineLineListsPassesDefInOrder) {
  const std::string doc = read_doc("docs/jit.md");
  ASSERT_FALSE(doc.empty()) << "docs/jit.md not found";
  const std::string head = "trace optimizer (optimizer/): ";
  const size_t at = doc.find(head);
  ASSERT_NE(at, std::string::npos) << "no line '" << head << "...' in docs/jit.md";
  const size_t end = doc.find("   (IR in, IR out)", at);
  ASSERT_NE(end, std::string::npos);
  const std::string list = doc.substr(at + head.size(), end - at - head.size());
  const std::string arrow = " \u2500\u25b6 ";  // " ─▶ "
  std::vector<TracePipeline::Row> documented;
  for (size_t from = 0; from <= list.size();) {
    size_t to = list.find(arrow, from);
    if (to == std::string::npos) to = list.size();
    const std::string item = list.substr(from, to - from);
    const bool optional = item.size() > 2 && item.front() == '[' && item.back() == ']';
    documented.push_back({optional ? item.substr(1, item.size() - 2) : item, optional ? "off" : "on"});
    from = to + arrow.size();
  }
  std::vector<TracePipeline::Row> want;
  const JitParams defaults;
  for (const TracePipeline::Row& row : TracePipeline::rows()) {
    const bool on = row.enabled_by.empty() || defaults.*param_fields().at(row.enabled_by) != 0;
    want.push_back({row.name, on ? "on" : "off"});
  }
  EXPECT_EQ(documented, want);
}

// docs/jit.md's --dump file list numbers the steps of the default pipeline
// (after .0-recorded.ir), and, were peeling off by default, where peel=1's
// file would go.
TEST(TracePipeline, DocsDumpFileListFollowsTheSteps) {
  const std::string doc = read_doc("docs/jit.md");
  ASSERT_FALSE(doc.empty()) << "docs/jit.md not found";
  // Every file name `....N-STEP.ir` in the text, in order, as "N-STEP".
  std::vector<std::string> documented;
  for (size_t e = doc.find(".ir`"); e != std::string::npos; e = doc.find(".ir`", e + 1)) {
    const size_t b = doc.rfind('`', e - 1);
    const std::string name = doc.substr(b + 1, e - b - 1);
    for (size_t d = name.find('.'); d != std::string::npos; d = name.find('.', d + 1)) {
      size_t k = d + 1;
      while (k < name.size() && std::isdigit(static_cast<unsigned char>(name[k]))) ++k;
      if (k > d + 1 && k < name.size() && name[k] == '-') {
        documented.push_back(name.substr(d + 1));
        break;
      }
    }
  }
  std::vector<std::string> want = {"0-recorded"};
  const std::vector<std::string> steps = TracePipeline(passtest::default_options()).step_names();
  for (size_t i = 0; i < steps.size(); ++i) want.push_back(std::to_string(i + 1) + "-" + steps[i]);
  if (!passtest::default_options().peel) {
    TracePipeline::Options peeling = passtest::default_options();
    peeling.peel = true;
    const std::vector<std::string> peeled = TracePipeline(peeling).step_names();
    const auto peel = std::find(peeled.begin(), peeled.end(), "peel");
    ASSERT_NE(peel, peeled.end());
    want.push_back(std::to_string(peel - peeled.begin() + 1) + "-peel");
  }
  EXPECT_EQ(documented, want);
}

// verify_each: the verifier runs on the input and after every step, and a
// broken trace throws naming where.
TEST(TracePipeline, VerifyEachNamesWhereTheTraceBroke) {
  const ScopedIRVerifyMode throwing("1");
  TraceIR ir = parse_ir(
      "0000    int  KINT   1\n"
      "0001 >  int  SLOAD  0  0  #0\n"
      "0002    int  ADD    0001  0000\n"
      "0003 >  none EXIT    #0\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n");
  ir[3].snap = kNoSnap;  // EXIT without a snapshot
  TracePipeline::Options options = passtest::default_options();
  options.verify_each = true;
  TracePipeline verifying(options);
  try {
    verifying.run(ir);
    ADD_FAILURE() << "no IRVerifyError";
  } catch (const IRVerifyError& e) {
    EXPECT_NE(std::string(e.what()).find("before the optimizer"), std::string::npos) << e.what();
  }
}

// V[i] = V[i] + G * 2.0 in a counting loop: G, V, V's length and G * 2.0
// move before LOOP; the second bounds check goes; the body keeps one
// bounds check, the load (typed: V[i] was a float), the add
// and the store.
TEST(TracePipeline, CountingLoopOverAGlobalList) {
  TracePipeline p(passtest::default_options());
  EXPECT_IR_EQ(passtest::apply(p,
                               "0000    int  KINT   1\n"
                               "0001    flt  KFLOAT 2.0\n"
                               "0002 >  int  SLOAD  1  0  #0\n"
                               "0003 >  int  SLOAD  2  0  #0\n"
                               "0004    none LOOP\n"
                               "0005 >  list GLOAD  0  #1\n"
                               "0006    int  LLEN   0005\n"
                               "0007    bool ULT    0002  0006\n"
                               "0008 >  none GUARDT 0007  #2\n"
                               "0009 >  flt  LLOAD  0005  0002  #2\n"
                               "0010 >  flt  GLOAD  1  #3\n"
                               "0011    flt  FMUL   0010  0001\n"
                               "0012    flt  FADD   0009  0011\n"
                               "0013 >  list GLOAD  0  #4\n"
                               "0014    int  LLEN   0013\n"
                               "0015    bool ULT    0002  0014\n"
                               "0016 >  none GUARDT 0015  #5\n"
                               "0017    none LREF   0013  0002\n"
                               "0018    none LSTORE 0017  0012\n"
                               "0019    int  ADD    0002  0000\n"
                               "0020    bool LT     0019  0003\n"
                               "0021 >  none GUARDT 0020  #6\n"
                               "0022    int  PHI    0002  0019\n"
                               "SNAP #0 ir=0002 pc=0 frames=[] []\n"
                               "SNAP #1 ir=0005 pc=1 frames=[] []\n"
                               "SNAP #2 ir=0008 pc=2 frames=[] []\n"
                               "SNAP #3 ir=0010 pc=3 frames=[] []\n"
                               "SNAP #4 ir=0013 pc=5 frames=[] [3=0012]\n"
                               "SNAP #5 ir=0016 pc=6 frames=[] [3=0012]\n"
                               "SNAP #6 ir=0021 pc=8 frames=[] [1=0019]\n"),
               "0000    int  KINT   1\n"
               "0001    flt  KFLOAT 2.0\n"
               "0002 >  int  SLOAD  1  0  #0\n"
               "0003 >  int  SLOAD  2  0  #0\n"
               "0004 >  list GLOAD  0  #0\n"
               "0005    int  LLEN   0004\n"
               "0006 >  flt  GLOAD  1  #0\n"
               "0007    flt  FMUL   0006  0001\n"
               "0008    none LOOP\n"
               "0009    bool ULT    0002  0005\n"
               "0010 >  none GUARDT 0009  #2\n"
               "0011 >  flt  LLOAD  0004  0002  #2\n"
               "0012    flt  FADD   0011  0007\n"
               "0013    none LREF   0004  0002\n"
               "0014    none LSTORE 0013  0012\n"
               "0015    int  ADD    0002  0000\n"
               "0016    bool LT     0015  0003\n"
               "0017 >  none GUARDT 0016  #6\n"
               "0018    int  PHI    0002  0015\n"
               "SNAP #0 ir=0002 pc=0 frames=[] []\n"
               "SNAP #1 ir=0004 pc=1 frames=[] []\n"
               "SNAP #2 ir=0010 pc=2 frames=[] []\n"
               "SNAP #3 ir=0006 pc=3 frames=[] []\n"
               "SNAP #4 ir=0013 pc=5 frames=[] [3=0012]\n"
               "SNAP #5 ir=0013 pc=6 frames=[] [3=0012]\n"
               "SNAP #6 ir=0017 pc=8 frames=[] [1=0015]\n");
}

}  // namespace
}  // namespace tessera::jit
