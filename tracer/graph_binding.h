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

// The region kind of a scalar operand of IR type `t` (a script number or
// bool); none for a type no operation takes as a scalar.
std::optional<ScalarKind> scalar_kind(IRType t);

// A call bound as the op table binds it: its input arguments (their
// positions among the call's arguments: the op's inputs, then weight and
// bias) and the region attributes its attribute arguments give.
struct BoundCall {
  std::vector<size_t> inputs;
  RegionAttrs attrs;
};

// Binds call `t` of op `def` on argument values `args` (transpose's axes,
// ints its result's type depends on, as attributes: RegionAttrs::swap);
// nullopt where an attribute is not a constant of the trace (a kernel is specialized to it;
// a dtype is one where the trace assumes its global constant), is one no
// kernel takes, or the call would raise (the interpreter then reports it).
std::optional<BoundCall> bind_call(const TraceIR& ir, const CallTarget& t, const OpDef& def,
                                   const std::vector<IRRef>& args);

}  // namespace tessera::jit
