// TensorSinkPass: allocation sinking for small tensors (PyPy's virtuals,
// LuaJIT's sunk allocations, applied to the tensor built-ins). A tensor
// temporary in a trace is the result of a helper call (`tensor([x, y])`,
// `v * 2.0`, `sum(w)`): an allocation, a kernel launch on the CPU and a
// reference count each. When the trace knows the tensor's dtype and shape
// and only reads it, it need not exist: its elements become SSA values
// computed by scalar instructions, and the reads become those values.
//
// Static layouts. A tensor's dtype and shape are known, with no guard, when
// they follow from how the trace made it (optimizer/tensor_sink_ops.def):
// `tensor(L)` and `zeros/ones/full(L[, x])` of a list literal L (of numbers;
// of constant ints for a shape) built just before, and elementwise
// arithmetic, `+ - * /` with a number or another such tensor (broadcast),
// unary minus and math, `sum` and `mean` of such tensors. Only f32 and i64 tensors of
// 1 to `max_elements` elements. For every such tensor TDTYPE, TRANK and TDIM
// become constants (so its dtype, rank and bounds guards fold away), and `item`, `len`,
// `numel` and `ndim` of it become its element or a constant instead of a
// call, even when the tensor itself stays allocated.
//
// Guarded layouts. A tensor the trace did not make (a parameter, a list
// element, a global) has no static layout, but the recorder notes the
// layouts of small tensor arguments it saw (CallTarget::seen). When such an
// argument feeds one of the operations above, guards on its dtype, rank and
// dimensions go before the call (leaving through the call's snapshot, where
// the interpreter redoes it), and from there on it counts as static: the
// call's result may sink, computed from loads of its elements. A different
// shape later fails the guards; side traces take it from there.
//
// Sunk tensors. A tensor with a static layout is sunk when it does not
// escape: its value (the helper's reload) is read only by TDTYPE, TDIM,
// element loads at constant indices, the operations above that are
// themselves sunk or replaced, stores into other registers (a second name:
// `let a = v`, an argument register) and snapshots. Anything else (a
// store into a list or global, an element store, an argument of another
// helper, a PHI, an identity comparison) keeps the allocation, as does a
// register write DeferredWrites cannot leave to the exits. The call becomes
// VNEWTENSOR (no code) over its elements; the exits after it that name its
// registers build the tensor there, once per exit for all its names
// (deopt/exit_plan.h), so the interpreter sees one object.
//
// Elements are computed exactly as the CPU kernels compute them: f32
// results on doubles rounded with F32RND (scalars rounded to f32 first where
// the kernels' f32 fast path does), i64 results with wrapping integer
// arithmetic, sums and means accumulated in order in a double (or int64).
// A sunk tensor's inputs that stay allocated are read with element loads.
// The pass ends with the fold pass: elements of constants become constants,
// and the dtype and bounds checks of static tensors compare constants.
//
// Runs before the list sinking pass (sink): a list literal that only fed a
// sunk `tensor(...)` or `zeros(...)` call is then unused, and sinks.
#pragma once

#include <cstdint>

#include "optimizer/pass.h"

namespace tessera::jit {

class TensorSinkPass final : public TracePass {
 public:
  // Tensors of more than `max_elements` elements are never sunk (each
  // element is an SSA value, and every exit that names the tensor stores
  // them all); `--jit-param sinkmax` (TracePipeline::Options).
  explicit TensorSinkPass(uint32_t max_elements) : max_elements_(max_elements) {}
  const char* name() const override { return "tsink"; }
  // run() reports the IR after the sinking as step "tsink"; what it returns,
  // after the inner FoldPass, is the step "tsink.fold".
  const char* result_name() const override { return "tsink.fold"; }
  bool run(TraceIR& ir) override;

 private:
  uint32_t max_elements_;
};

}  // namespace tessera::jit
