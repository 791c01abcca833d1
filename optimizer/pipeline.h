// TracePipeline: the trace optimizer, the passes in their order
// (fold, cse, licm, tsink (sinking of small tensors), sink (of list
// literals, some of which fed a sunk tensor), guards (guard elimination),
// predicate (loop predication of induction variables' bounds checks), cse
// again to merge what LICM, sinking, guard elimination and predication
// brought together, dse, dce). With Options::peel (`--jit-param peel=1`)
// loop peeling runs after sink: fold, cse, licm, sink, peel, guards,
// predicate, cse, dse, dce (optimizer/loop_peel.h says why there);
// Options::predicate false (`predicate=0`) leaves predication out,
// Options::sink false (`sink=0`) both sinking passes.
// Runs between the recorder and the backend; `--jit-param opt=0` skips it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "optimizer/pass.h"
#include "tracer/ir_verify.h"

namespace tessera::jit {

class TracePipeline {
 public:
  struct Options {
    bool peel = false;       // loop peeling (LoopPeelPass)
    bool predicate = true;   // loop predication (LoopPredicatePass)
    bool sink = true;        // allocation sinking (TensorSinkPass, AllocSinkPass)
    uint32_t sink_max_elements = 16;  // TensorSinkPass's largest tensor
    // Run the IR verifier (tracer/ir_verify.h) on the input and after every
    // pass and inner step (LLVM's -verify-each); a broken trace throws
    // IRVerifyError naming the pass (or aborts under TESSERA_VERIFY_IR=abort).
    // On by default in builds without NDEBUG and when TESSERA_VERIFY_IR asks.
    bool verify_each = ir_verify_mode() != IRVerifyMode::off;
  };
  // The default pipeline.
  TracePipeline();
  explicit TracePipeline(const Options& options);
  // Called after each pass with its name and the IR it left (for --dump's
  // per-pass files, -print-after-all style), and after the inner steps a
  // pass reports (TensorSinkPass: "tsink" before its inner fold, then
  // "tsink.fold"); may be empty.
  using AfterPass = std::function<void(const char* pass, const TraceIR& ir)>;
  // Returns whether any pass changed the trace.
  bool run(TraceIR& ir, const AfterPass& after = {}) const;
  // The pass names in order, e.g. for --help and docs.
  std::vector<std::string> pass_names() const;
  // The names run() reports to AfterPass, in order (pass_names with the
  // inner steps: "tsink", "tsink.fold"), e.g. for --dump's file names.
  std::vector<std::string> step_names() const;

 private:
  std::vector<std::unique_ptr<TracePass>> passes_;
  bool verify_each_ = false;
};

}  // namespace tessera::jit
