// The baseline host backend (tier T1): trace IR -> x86-64 with asmjit's
// Assembler in one pass after a linear-scan register allocation
// (live_intervals, linear_scan, trace_assembler). No IR-level optimization
// of its own: it compiles what the trace optimizer produced, in tens of
// microseconds, with the same exits, snapshot protocol and calling
// convention as the LLVM tier (trace_abi.h), so traces of both tiers link
// to each other and share deopt/.
//
// Each AsmjitBackend owns an asmjit JitRuntime: compiled code lives as long
// as the backend. compile() is not thread-safe.
//
// asmjit types never appear in this header.
#pragma once

#include <memory>
#include <string>

#include "codegen/host/compiled_trace.h"

namespace tessera::jit {

// Runs the IR verifier before compiling only when verification is on
// (TESSERA_VERIFY_IR when the backend is created, or no NDEBUG).
class AsmjitBackend final : public HostBackend {
 public:
  AsmjitBackend();
  ~AsmjitBackend() override;
  AsmjitBackend(const AsmjitBackend&) = delete;
  AsmjitBackend& operator=(const AsmjitBackend&) = delete;

  const char* name() const override { return "asmjit"; }
  using HostBackend::compile;
  CompiledTrace compile(const TraceIR& ir, const std::string& name, const ExitLinking& linking,
                        const FunctionProto* proto = nullptr, const uint8_t* global_watch = nullptr) override;
  // The same, polling for tier-up (LoweringEnv::tier_up_counter; needs
  // linking.links).
  CompiledTrace compile(const TraceIR& ir, const std::string& name, const ExitLinking& linking,
                        const FunctionProto* proto, const uint8_t* global_watch, uint32_t* tier_up_counter);
  // CompiledTrace::text is the assembly listing.
  void set_keep_text(bool keep) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::jit
