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
// None where no argument was a tensor while recording (CallTarget::seen),
// except for the built-ins that always make a tensor (zeros, arange, ...).
std::optional<OpId> graph_op(const CallTarget& t);

// The region kind of a scalar operand of IR type `t` (a script number or
// bool); none for a type no operation takes as a scalar.
std::optional<ScalarKind> scalar_kind(IRType t);

// How an argument that is not a tensor or a number binds (types only).
enum class ValueArg : uint8_t {
  Shape,    // a list of ints: a shape operand (zeros' shape, reshape's)
  Tensors,  // a list of tensors: one input each (concat)
  Scalars,  // a flat list of numbers: one scalar input each (tensor())
  Axis,     // an int the type depends on: RegionAttrs::axis (slice)
  Axes,     // ints the type depends on: RegionAttrs::axes (transpose's two, permute's list)
  Count,    // an int that only sizes a dim read off the result (slice's bounds): not an input
};

// A call bound as the op table binds it: its input arguments (their
// positions among the call's arguments: the op's inputs, then weight and
// bias, then arange's step) and the region attributes its attribute
// arguments give.
struct BoundCall {
  std::vector<size_t> inputs;
  RegionAttrs attrs;
  // The arguments bound by ValueArg (positions); and the arguments the
  // type depends on that are not constants of the trace (an axis, a
  // permutation, an attribute such as `axis=` or `keepdim=` from a
  // variable), bound to their values as recorded: the recorder guards that
  // they keep them.
  std::vector<std::pair<size_t, ValueArg>> value_args;
  std::vector<size_t> pinned;
};

// Binds call `t` of op `def` on argument values `args`; nullopt where an
// attribute is not a constant of the trace (a kernel is specialized to it;
// a dtype is one where the trace assumes its global constant), is one no
// kernel takes, or the call would raise (the interpreter then reports it).
// With `seen` (the arguments' values as recorded: the recorder's typing),
// an int or a list of ints the type depends on (ValueArg Axis, Axes), or an
// attribute that is an int, a bool or a float, may be pinned instead of
// constant; without it (fusion) such a call binds only where they are
// constants.
std::optional<BoundCall> bind_call(const TraceIR& ir, const CallTarget& t, const OpDef& def,
                                   const std::vector<IRRef>& args,
                                   const std::vector<const Value*>* seen = nullptr);

}  // namespace tessera::jit
