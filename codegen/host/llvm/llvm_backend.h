// The optimizing host backend (tier T2): trace IR -> LLVM IR -> the trace
// pass pipeline -> native code through LLVM ORC's LLJIT. The compiler itself
// (llvm_trace_compiler.h) is in the LLVM library
// (codegen/llvm_library/llvm_library.h), which the first LlvmBackend loads
// where it is not linked in: the constructor throws std::runtime_error when
// it cannot be loaded.
//
// Each LlvmBackend owns one LLJIT instance; compiled traces stay valid as long
// as the backend lives. compile() is not thread-safe: a background compile
// thread should own its backend (or serialize calls).
//
// LLVM types never appear in this header, so that the runtime and tests can
// include it without LLVM's include paths or warnings.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "codegen/host/compiled_trace.h"
#include "codegen/host/test_compile_failure.h"
#include "tracer/trace_ir.h"

namespace tessera::jit {

class LlvmBackend final : public HostBackend {
 public:
  // opt_level selects the IR pipeline and the code generator's level:
  //   0  no IR passes, CodeGenOptLevel::None (fast instruction selection)
  //   1  PassBuilder O1, Less
  //   2  the trace pipeline (EarlyCSE, InstCombine, SimplifyCFG, LICM,
  //      InstCombine, SimplifyCFG), Less: the default
  //   3  PassBuilder O3, Aggressive
  explicit LlvmBackend(int opt_level = 2);
  ~LlvmBackend();
  LlvmBackend(const LlvmBackend&) = delete;
  LlvmBackend& operator=(const LlvmBackend&) = delete;

  const char* name() const override { return "llvm"; }
  using HostBackend::compile;
  CompiledTrace compile(const TraceIR& ir, const std::string& name, const ExitLinking& linking,
                        const FunctionProto* proto = nullptr, const uint8_t* global_watch = nullptr) override {
    if (fail_for_test_) throw_test_compile_failure("TESSERA_TEST_FAIL_T2", name);
    return compiler_->compile(ir, name, linking, proto, global_watch);
  }
  // CompiledTrace::text is the optimized module (printing a large module
  // costs a few percent of its compile time).
  void set_keep_text(bool keep) override { compiler_->set_keep_text(keep); }

 private:
  std::unique_ptr<HostBackend> compiler_;
  const bool fail_for_test_ = test_compile_failure_on("TESSERA_TEST_FAIL_T2");
};

}  // namespace tessera::jit
