// The host tiers' test fixture (host_backend_test.cpp, host_backend_calls_test.cpp): traces built
// by hand with TraceIR's builder, compiled by each backend (T1: AsmjitBackend, T2: LlvmBackend),
// and run on real Values.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstddef>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "codegen/host/asmjit/asmjit_backend.h"
#include "codegen/host/llvm/llvm_backend.h"
#include "codegen/host/trace_abi.h"
#include "tracer/ir_verify.h"
#include "tracer/trace_ir.h"
#include "vm/builtins/builtin.h"
#include "vm/core/number_ops.h"
#include "vm/core/operators.h"
#include "vm/core/value.h"
#include "vm/interp/vm.h"
#include "vm/tensor/tensor.h"
#include "vm/tensor/vector_math.h"

namespace tessera::jit {

// Adds a snapshot with the given (slot, ref) entries; returns its number.
inline uint16_t snap(TraceIR& ir, std::vector<SnapshotEntry> entries) {
  Snapshot s;
  s.entries = std::move(entries);
  ir.snapshots().push_back(std::move(s));
  return static_cast<uint16_t>(ir.snapshots().size() - 1);
}

inline IRRef sload(TraceIR& ir, IRType t, uint32_t slot, uint16_t s) { return ir.emit(IROp::SLOAD, t, slot, 0, s); }

// Runs a compiled trace on `regs` / `globals`.
struct Runner {
  VM vm;
  std::vector<Value> regs;
  std::vector<Value> globals;
  uint64_t exit_vals[16] = {};
  uint32_t run(TraceFn fn) {
    JitContext ctx;  // the other members keep their defaults
    ctx.vm = &vm;
    ctx.base = regs.data();
    ctx.globals = globals.data();
    return fn(regs.data(), globals.data(), exit_vals, &ctx);
  }
};

inline double as_double(uint64_t bits) { return std::bit_cast<double>(bits); }

// Linked exits with nothing linked yet: exits write the registers
// themselves (which sunk allocations need) and return 7 << 16 | snapshot.
struct ReturningExits {
  NativeTrace links[8] = {};
  ExitLinking linking{7u << 16, links};
};

// The CARG chain of `elements` (a CALL's arguments, a sunk object's elements).
inline IRRef carg_chain(TraceIR& ir, const std::vector<IRRef>& elements) {
  IRRef chain = elements.at(0);
  for (size_t i = 1; i < elements.size(); ++i) chain = ir.emit(IROp::CARG, IRType::None, chain, elements[i]);
  return chain;
}

inline void report(const char* what, const CompiledTrace& t) {
  std::cout << "[compile] " << what << ": " << t.compile_ms << " ms, " << t.code_size << " bytes\n";
  // TESSERA_CODEGEN_DUMP=1 shows the optimized LLVM IR, for inspecting codegen.
  if (std::getenv("TESSERA_CODEGEN_DUMP") != nullptr) std::cout << t.text << "\n";
}

class HostBackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<HostBackend> make_backend() const {
    if (GetParam() == "asmjit") return std::make_unique<AsmjitBackend>();
    return std::make_unique<LlvmBackend>();
  }
};

// for i in range(len(src)): acc += src[i]; dst[i] = float(src[i])
// Guards: i < len(src) (snap 1), src[i] is an int (snap 2), i < len(dst) (snap 3).
struct ListTrace {
  TraceIR ir;
  ListTrace() {
    const uint16_t s0 = snap(ir, {});
    IRRef src = sload(ir, IRType::List, 0, s0);
    IRRef dst = sload(ir, IRType::List, 1, s0);
    IRRef i = sload(ir, IRType::Int, 2, s0);
    IRRef acc = sload(ir, IRType::Int, 3, s0);
    ir.emit(IROp::LOOP, IRType::None);
    const uint16_t s1 = snap(ir, {{2, i}, {3, acc}});
    const uint16_t s2 = snap(ir, {{2, i}, {3, acc}});
    const uint16_t s3 = snap(ir, {{2, i}, {3, acc}});
    IRRef n = ir.emit(IROp::LLEN, IRType::Int, src);
    ir.emit(IROp::GUARDT, IRType::None, ir.emit(IROp::ULT, IRType::Bool, i, n), 0, s1);
    IRRef e = ir.emit(IROp::LLOAD, IRType::Int, src, i, s2);
    IRRef m = ir.emit(IROp::LLEN, IRType::Int, dst);
    ir.emit(IROp::GUARDT, IRType::None, ir.emit(IROp::ULT, IRType::Bool, i, m), 0, s3);
    IRRef ref = ir.emit(IROp::LREF, IRType::None, dst, i);
    ir.emit(IROp::LSTORE, IRType::None, ref, ir.emit(IROp::CONV, IRType::Float, e));
    IRRef acc2 = ir.emit(IROp::ADD, IRType::Int, acc, e);
    IRRef i2 = ir.emit(IROp::ADD, IRType::Int, i, ir.kint(1));
    ir.emit(IROp::PHI, IRType::Int, i, i2);
    ir.emit(IROp::PHI, IRType::Int, acc, acc2);
  }
};

}  // namespace tessera::jit
