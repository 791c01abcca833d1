// What a host backend hands back for one trace, and the interface both host
// tiers implement (T1: asmjit, T2: LLVM ORC), so that the runtime and the
// tests treat them alike.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "codegen/host/trace_abi.h"
#include "deopt/exit_plan.h"
#include "tracer/trace_ir.h"

namespace tessera::jit {

struct CompiledTrace {
  TraceFn fn = nullptr;          // entry for C++ (the C calling convention)
  NativeTrace native = nullptr;  // the trace itself, for ExitLinking::links
  // Its entry that takes passed values in registers (trace_abi.h), for
  // ExitLinking::passed_links; null when it has no SLOAD of mode 3 + i.
  NativeTrace native_passed = nullptr;
  // --dump: the generated code as text (T2: the optimized LLVM IR, T1: the
  // assembly listing); empty unless the backend was asked to keep it.
  std::string text;
  // --dump, T2 only: the ELF object LLVM generated (`objdump -d` shows the
  // machine code that runs); empty otherwise.
  std::string object;
  // --dump, T2 only: `object`'s machine code disassembled, each run of
  // instructions headed by the IR instruction it implements
  // (object_disassembly.h).
  std::string disassembly;
  size_t code_size = 0;   // bytes of machine code
  // Where that code starts (T2: the lower of fn and native, an estimate:
  // LLVM places the module's text as it likes); for profiling.
  const void* code_begin = nullptr;
  double compile_ms = 0;  // everything the backend did for this trace
  // The exit plan of every snapshot (deopt/exit_plan.h), as the code emits
  // them; owned by the backend, as long as the code. The runtime resumes
  // the interpreter by them (frames, pcs) and sizes exit_vals for them.
  const std::vector<ExitPlan>* exit_plans = nullptr;
};

class HostBackend {
 public:
  virtual ~HostBackend() = default;
  // "asmjit" or "llvm".
  virtual const char* name() const = 0;
  // Compiles `ir` (a loop: LOOP + PHIs, or a linear trace ending in EXIT).
  // `name` names the code in dumps. With linking.links set, exits write the
  // registers and continue into links[snap] when it is set (trace_abi.h);
  // otherwise they fill exit_vals. `proto`: the function the trace starts in
  // (needed by FPUSH). `global_watch`: see LoweringEnv. Throws
  // std::runtime_error naming the trace and the offending instruction.
  virtual CompiledTrace compile(const TraceIR& ir, const std::string& name, const ExitLinking& linking,
                                const FunctionProto* proto = nullptr, const uint8_t* global_watch = nullptr) = 0;
  CompiledTrace compile(const TraceIR& ir, const std::string& name) { return compile(ir, name, ExitLinking{}); }
  // Whether CompiledTrace::text is filled (default true; the runtime keeps
  // it only for --dump, as printing costs compile time).
  virtual void set_keep_text(bool keep) = 0;
};

}  // namespace tessera::jit
