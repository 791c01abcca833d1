#include "optimizer/pipeline.h"

#include "optimizer/cse.h"
#include "optimizer/dce.h"
#include "optimizer/dse.h"
#include "optimizer/fold.h"
#include "optimizer/guard_elim.h"
#include "optimizer/licm.h"

namespace tessera::jit {

TracePipeline::TracePipeline() {
  passes_.push_back(std::make_unique<FoldPass>());
  passes_.push_back(std::make_unique<CsePass>());
  passes_.push_back(std::make_unique<LicmPass>());
  passes_.push_back(std::make_unique<GuardElimPass>());
  passes_.push_back(std::make_unique<CsePass>());
  passes_.push_back(std::make_unique<DsePass>());
  passes_.push_back(std::make_unique<DcePass>());
}

bool TracePipeline::run(TraceIR& ir, const AfterPass& after) const {
  bool changed = false;
  for (const auto& p : passes_) {
    changed = p->run(ir) || changed;
    if (after) after(p->name(), ir);
  }
  return changed;
}

std::vector<std::string> TracePipeline::pass_names() const {
  std::vector<std::string> names;
  for (const auto& p : passes_) names.emplace_back(p->name());
  return names;
}

}  // namespace tessera::jit
