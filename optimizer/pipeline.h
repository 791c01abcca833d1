// TracePipeline: the trace optimizer, the passes of optimizer/passes.def in
// that order (the one place the order is written), each row switched on by
// `always` or by a JIT parameter (`--jit-param peel=1`, `predicate=0`,
// `sink=0`). Runs between the recorder and the backend; `--jit-param opt=0`
// skips it.
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
  // Which passes run, and their settings. No defaults here: they are the JIT
  // parameters' (runtime/jit_params.def), which the constructor copies.
  struct Options {
    // `params` is a JitParams (runtime/jit_params.h; the optimizer does not
    // include the runtime's headers, so any struct with these fields does).
    template <typename Params>
    explicit Options(const Params& params)
        : peel(params.peel != 0),
          peel_every_loop(params.peel == 2),
          predicate(params.predicate != 0),
          sink(params.sink != 0),
          fuse(params.fuse != 0),
          sink_max_elements(static_cast<uint32_t>(params.sinkmax)),
          verify_each(params.verify != 0 || ir_verify_mode() != IRVerifyMode::off) {}

    // passes.def's SWITCH column names these fields; its rows that say
    // `always` read this one.
    static constexpr bool always = true;
    bool peel;       // loop peeling (LoopPeelPass)
    // peel=2: every loop the pass can peel; peel=1: where it pays (loop_peel.h)
    bool peel_every_loop;
    bool predicate;  // loop predication (LoopPredicatePass)
    bool sink;       // allocation sinking (TensorSinkPass, AllocSinkPass)
    bool fuse;       // fusion of tensor operations into kernels (FusionPass)
    uint32_t sink_max_elements;  // TensorSinkPass's largest tensor (sinkmax)
    // Run the IR verifier (tracer/ir_verify.h) on the input and after every
    // pass and inner step (LLVM's -verify-each); a broken trace throws
    // IRVerifyError naming the pass (or aborts under TESSERA_VERIFY_IR=abort).
    // On with `verify=1`, and when TESSERA_VERIFY_IR asks (by default in
    // builds without NDEBUG).
    bool verify_each;
  };
  explicit TracePipeline(const Options& options);

  // One row of passes.def: the pass's name and the JIT parameter that
  // switches it on ("" for `always`).
  struct Row {
    std::string name;
    std::string enabled_by;
    bool operator==(const Row&) const = default;
  };
  // Every row of passes.def in order, whatever the options.
  static std::vector<Row> rows();

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
