// IR in / IR out for optimizer pass tests: parse the text form, run one pass
// (or the pipeline), print the result; EXPECT_IR_EQ (tests/tracer/ir_match.h)
// compares it with the expected text up to value numbering.
#pragma once

#include <string>
#include <string_view>

#include "optimizer/pass.h"
#include "optimizer/pipeline.h"
#include "runtime/jit_params.h"
#include "tests/tracer/ir_match.h"
#include "tracer/ir_verify.h"
#include "tracer/trace_ir.h"

namespace tessera::jit::passtest {

// The pipeline's options under the default JIT parameters (jit_params.def).
inline TracePipeline::Options default_options() { return TracePipeline::Options(JitParams{}); }

inline std::string apply(TracePass& pass, std::string_view text) {
  TraceIR ir = parse_ir(text);
  pass.run(ir);
  // Every pass's result must pass the IR verifier (the pipeline's
  // verify_each does the same for traces the runtime optimizes).
  verify_ir(ir, std::string("after ") + pass.name());
  std::string out = print_ir(ir);
  // The result must itself be well-formed IR: it parses back to the same text.
  if (print_ir(parse_ir(out)) != out) return "ROUND TRIP FAILED\n" + out;
  return out;
}

inline std::string apply(const TracePipeline& pipeline, std::string_view text) {
  TraceIR ir = parse_ir(text);
  // Verifies after every pass when verify_each is on (tests run with
  // TESSERA_VERIFY_IR set), and the result always.
  pipeline.run(ir);
  verify_ir(ir, "after the pipeline");
  return print_ir(ir);
}

}  // namespace tessera::jit::passtest
