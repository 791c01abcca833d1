// FusionPass (docs/tensor-jit.md, Fusion): runs of tensor operations in a
// trace become one call of a kernel.
//
// A run is a sequence of CALLs of Graph IR operations (tensor built-ins,
// arithmetic, comparisons and negation with a tensor operand), typed by the
// layouts the recorder saw (CallTarget::seen), that one kernel can compute
// (vm/graph/region.h, Region::add: elementwise operations; reductions and
// normalizations with their producers and consumers; a leading matmul or
// attention with its epilogue; attributes must be constants of the trace:
// bind_call, tracer/graph_binding.h, binds positional and keyword
// arguments as the op table does),
// with nothing between them but their argument chains, the reloads of their
// results, pure instructions, register writes of the run's intermediates
// (a `let` local naming one) that may go (no later exit reads the
// register), the recorder's guards on the layouts of tensors from before
// the run or loaded in it (tracer/trace_shapes.h), and global loads; those
// guards and loads move before the run (they exit through the run's first
// snapshot, where the interpreter redoes the run; loads of one global are
// one input, as the run stores nothing to memory). Every result but the run's last must be internal: read only by
// later calls of the run and by no exit (register liveness through
// DeferredWrites); such a call, its reload and its arguments are dropped, so
// its tensor is never allocated; a row kernel's output must be of its rows
// (Region::valid_output). The run's last call becomes a Kernel call of the
// run's region (call::Kernel::region) on the region's inputs, writing the same
// register and reloaded as before, after guards on its inputs' layouts, and
// it takes the run's first snapshot: when the kernel raises (the
// interpreter's kernels, which run when the inputs do not fit the kernel,
// find an error) or a guard fails, the interpreter redoes the whole run and
// reports the error at its own line.
#pragma once

#include "optimizer/pass.h"

namespace tessera::jit {

class FusionPass final : public TracePass {
 public:
  const char* name() const override { return "fuse"; }
  bool run(TraceIR& ir) override;
};

}  // namespace tessera::jit
