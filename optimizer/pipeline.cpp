#include "optimizer/pipeline.h"

#include <string>

#include "optimizer/alloc_sink.h"
#include "optimizer/cse.h"
#include "optimizer/dce.h"
#include "optimizer/dse.h"
#include "optimizer/fold.h"
#include "optimizer/fusion.h"
#include "optimizer/guard_elim.h"
#include "optimizer/licm.h"
#include "optimizer/phi_merge.h"
#include "optimizer/loop_peel.h"
#include "optimizer/loop_predicate.h"
#include "optimizer/number_load.h"
#include "optimizer/tensor_sink.h"

namespace tessera::jit {

namespace {

template <typename Pass>
std::unique_ptr<TracePass> make_pass(const TracePipeline::Options&) {
  return std::make_unique<Pass>();
}
template <>
std::unique_ptr<TracePass> make_pass<LoopPeelPass>(const TracePipeline::Options& options) {
  return std::make_unique<LoopPeelPass>(/*where_it_pays=*/!options.peel_every_loop);
}
template <>
std::unique_ptr<TracePass> make_pass<TensorSinkPass>(const TracePipeline::Options& options) {
  return std::make_unique<TensorSinkPass>(options.sink_max_elements);
}

}  // namespace

TracePipeline::TracePipeline(const Options& options) : verify_each_(options.verify_each) {
#define PASS(pass, enabled_by) \
  if (options.enabled_by) passes_.push_back(make_pass<pass>(options));
#include "optimizer/passes.def"
#undef PASS
}

std::vector<TracePipeline::Row> TracePipeline::rows() {
  struct AllOn {
    int64_t peel = 1, predicate = 1, sink = 1, fuse = 1, sinkmax = 1, verify = 0;
  };
  const Options options{AllOn{}};
  std::vector<Row> rows;
#define PASS(pass, enabled_by) \
  rows.push_back({make_pass<pass>(options)->name(), #enabled_by == std::string("always") ? "" : #enabled_by});
#include "optimizer/passes.def"
#undef PASS
  return rows;
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
