// The optimizing host backend (tier T2): trace IR -> LLVM IR -> the trace
// pass pipeline -> native code through LLVM ORC's LLJIT.
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

#include "codegen/host/trace_abi.h"
#include "tracer/trace_ir.h"

namespace tessera::jit {

struct CompiledTrace {
  TraceFn fn = nullptr;          // entry for C++ (the C calling convention)
  NativeTrace native = nullptr;  // the trace itself, for ExitLinking::links
  std::string llvm_ir;    // the optimized module as text (for --dump; empty unless kept)
  size_t code_size = 0;   // bytes of machine code (text sections of the object file)
  double compile_ms = 0;  // lowering + optimization + machine code generation
};

class LlvmBackend {
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

  // Compiles `ir` (which must loop: LOOP + PHIs). `name` names the function
  // in the dump; the backend makes the symbol unique. Throws
  // std::runtime_error with a message naming the trace and the offending
  // instruction on malformed IR or an LLVM failure.
  CompiledTrace compile(const TraceIR& ir, const std::string& name);
  // The same with linked exits (trace_abi.h): exits write the registers and
  // continue into `linking.links[snap]` when it is set.
  // `proto`: the function the trace starts in (needed by FPUSH).
  // `global_watch`: see LoweringEnv.
  CompiledTrace compile(const TraceIR& ir, const std::string& name, const ExitLinking& linking,
                        const FunctionProto* proto = nullptr, const uint8_t* global_watch = nullptr);

  // Whether CompiledTrace::llvm_ir is filled (default true). Printing a large
  // module costs a few percent of its compile time, so the runtime keeps it
  // only for --dump.
  void set_keep_llvm_ir(bool keep);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::jit
