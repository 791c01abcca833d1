// How a recorded call binds to the op table (vm/graph/ops.def): which Graph
// IR operation it performs and with which inputs and attributes. The
// recorder types the tensor operations it records with it (trace_shapes.h),
// and fusion reads them with it (optimizer/fusion.h); both follow the op
// table's own binding of positional and keyword arguments (op_table.h,
// bind_op), so no second list of operations exists.
#pragma once

#include <optional>
#include <vector>

#include "tracer/trace_ir.h"
#include "vm/graph/region.h"

namespace tessera::jit {

// The Graph IR operation a call performs on a tensor operand, if any: a
// tensor built-in's op-table row (by name: parsed IR carries no
// BuiltinDef), arithmetic's and comparisons' by BinOp and CmpOp, negation.
// None where no argument was a tensor while recording (CallTarget::seen).
std::optional<OpId> graph_op(const CallTarget& t);

// A call bound as the op table binds it: its input arguments (their
// positions among the call's arguments: the op's inputs, then weight and
// bias) and the region attributes its attribute arguments give.
struct BoundCall {
  std::vector<size_t> inputs;
  RegionAttrs attrs;
};

// Binds call `t` of op `def` on argument values `args`; nullopt where an
// attribute is not a constant of the trace (a kernel is specialized to it),
// is one no kernel takes (cast's dtype), or the call would raise (the
// interpreter then reports it).
std::optional<BoundCall> bind_call(const TraceIR& ir, const CallTarget& t, const OpDef& def,
                                   const std::vector<IRRef>& args);

}  // namespace tessera::jit
