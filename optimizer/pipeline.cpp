#include "optimizer/pipeline.h"

#include <string>

#include "optimizer/alloc_sink.h"
#include "optimizer/cse.h"
#include "optimizer/dce.h"
#include "optimizer/dse.h"
#include "optimizer/fold.h"
#include "optimizer/guard_elim.h"
#include "optimizer/licm.h"
#include "optimizer/loop_peel.h"
#include "optimizer/loop_predicate.h"
#include "optimizer/tensor_sink.h"

namespace tessera::jit {

TracePipeline::TracePipeline() : TracePipeline(Options{}) {}

TracePipeline::TracePipeline(const Options& options) : verify_each_(options.verify_each) {
  passes_.push_back(std::make_unique<FoldPass>());
  passes_.push_back(std::make_unique<CsePass>());
  passes_.push_back(std::make_unique<LicmPass>());
  if (options.sink) {
    passes_.push_back(std::make_unique<TensorSinkPass>(options.sink_max_elements));
    passes_.push_back(std::make_unique<AllocSinkPass>());
  }
  // After LICM, which needs a preamble without side effects; before the
  // passes that use what the peeled iteration establishes.
  if (options.peel) passes_.push_back(std::make_unique<LoopPeelPass>());
  passes_.push_back(std::make_unique<GuardElimPass>());
  // After guard elimination, which may already prove a bounds check.
  if (options.predicate) passes_.push_back(std::make_unique<LoopPredicatePass>());
  passes_.push_back(std::make_unique<CsePass>());
  passes_.push_back(std::make_unique<DsePass>());
  passes_.push_back(std::make_unique<DcePass>());
}

bool TracePipeline::run(TraceIR& ir, const AfterPass& after) const {
  bool changed = false;
  if (verify_each_) check_ir(ir, "before the optimizer");
  auto report = [&](const char* step, const TraceIR& now) {
    if (verify_each_) check_ir(now, std::string("after ") + step);
    if (after) after(step, now);
  };
  const TracePass::StepHook hook = report;
  for (const auto& p : passes_) {
    p->set_step_hook(&hook);
    try {
      changed = p->run(ir) || changed;
    } catch (...) {
      p->set_step_hook(nullptr);
      throw;
    }
    p->set_step_hook(nullptr);
    report(p->result_name(), ir);
  }
  return changed;
}

std::vector<std::string> TracePipeline::step_names() const {
  std::vector<std::string> names;
  for (const auto& p : passes_) {
    if (std::string(p->result_name()) != p->name()) names.emplace_back(p->name());
    names.emplace_back(p->result_name());
  }
  return names;
}

std::vector<std::string> TracePipeline::pass_names() const {
  std::vector<std::string> names;
  for (const auto& p : passes_) names.emplace_back(p->name());
  return names;
}

}  // namespace tessera::jit
