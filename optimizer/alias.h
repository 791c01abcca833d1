// AliasAnalysis: whether two memory accesses of a trace may touch the same
// memory (LuaJIT's lj_opt_mem aa_* functions). CSE asks it which remembered
// loads a store kills; DSE asks it which later store overwrites an earlier
// one and which loads in between may read it.
//
// An access is a list element (LLOAD, LREF, LSTORE through its LREF), a
// tensor element (TLOAD, TREF, TSTORE through its TREF; the index is a TIDX
// that carries the element dtype) or a global (GLOAD, GSTORE). The rules:
//  - Different spaces never alias: list elements live in each ListObj's
//    vector, tensor elements in each TensorObj's own buffer, globals in the
//    global table.
//  - Globals alias exactly when their indices are equal.
//  - Tensor elements whose TIDX dtypes differ never alias: a tensor's dtype
//    is fixed at creation and every tensor owns its buffer (no views; reshape
//    copies), so two dtypes mean two objects with disjoint storage (both
//    dtypes are guarded before their accesses run).
//  - Same list (or same tensor and dtype): the indices are compared as
//    linear forms over the trace's values (ADD, SUB, MUL by a constant,
//    constants; ints wrap, so the forms are exact modulo 2^64): equal forms
//    MustAlias, forms that differ by a non-zero constant (i vs i + 1, 3 vs 5)
//    are NoAlias, anything else MayAlias.
//  - Two different list (or tensor) references MayAlias: both may name one
//    object.
// Both accesses must lie on the same side of LOOP: in the loop body a PHI's
// first operand names the loop-carried value, so one reference stands for
// different values before LOOP and inside the body.
#pragma once

#include <cstdint>
#include <functional>

#include "tracer/trace_ir.h"

namespace tessera::jit {

enum class AliasResult : uint8_t { NoAlias, MayAlias, MustAlias };
const char* alias_result_name(AliasResult r);  // "NoAlias", "MayAlias", "MustAlias"

// The memory one access touches. The space is ir.def's (IRMemSpace): the
// analysis compares accesses of Global, ListElement and TensorElement.
struct MemLocation {
  using Space = IRMemSpace;
  Space space = Space::Global;
  uint32_t global = 0;    // Global: the global's index
  IRRef object = kNoRef;  // elements: the list or tensor; kNoRef when unknown (may be any)
  IRRef index = kNoRef;   // ListElement: the int index; TensorElement: the TIDX
};

class AliasAnalysis {
 public:
  // Maps a reference to the one it stands for (a pass's pending
  // substitution, such as CSE's); the identity when empty. It only makes
  // answers sharper: references it merges must hold equal values.
  using Resolver = std::function<IRRef(IRRef)>;
  explicit AliasAnalysis(const TraceIR& ir, Resolver resolve = {});

  // Accesses of the spaces the analysis compares (ir.def's SPACE and ACCESS
  // columns): loads, element addresses and stores of globals, list elements
  // and tensor elements.
  static bool is_memory_access(IROp op);
  static bool is_load(IROp op) { return is_memory_access(op) && ir_op_info(op).mem_access == IRMemAccess::Load; }
  static bool is_store(IROp op) { return is_memory_access(op) && ir_op_info(op).mem_access == IRMemAccess::Store; }

  // The location instruction `access` reads or writes, its references
  // resolved. An LSTORE (TSTORE) whose address is not an LREF (TREF) gets an
  // unknown object. Throws std::invalid_argument if `access` is not a memory
  // access.
  MemLocation location(IRRef access) const;

  AliasResult alias(const MemLocation& a, const MemLocation& b) const;
  AliasResult alias(IRRef access_a, IRRef access_b) const { return alias(location(access_a), location(access_b)); }

 private:
  IRRef resolve(IRRef r) const;
  AliasResult same_object_indices(IRRef a, IRRef b) const;
  AliasResult tensor_elements(const MemLocation& a, const MemLocation& b) const;

  const TraceIR& ir_;
  Resolver resolve_;
};

}  // namespace tessera::jit
