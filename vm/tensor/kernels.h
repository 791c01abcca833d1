// Reference CPU kernels for every Graph IR operation, with the shape and
// dtype rules they rely on. The Graph IR op table (vm/graph/ops.def) wires
// these to names, arities and attributes; the interpreter's operator paths
// (tensor_api.cpp) call them directly.
//
// Conventions: `name` is what error messages are prefixed with (a built-in
// name or an operator symbol). Kernels write into a preallocated `out` whose
// shape and dtype came from the matching *_shape / *_dtype function.
// Operands typed `const Value&` may be a tensor or an int/float/bool scalar
// (a scalar acts as a 0-d tensor under the §7 scalar promotion rules).
#pragma once

#include <optional>
#include <span>

#include "vm/tensor/broadcast.h"
#include "vm/tensor/op_kinds.h"
#include "vm/tensor/tensor.h"

namespace tessera {

// ------------------------------------------------------------- elementwise

bool is_comparison(Binary op);
// Shape of a tensor, or [] for a scalar.
Shape operand_shape(const Value& v);
// Throws "NAME: expected tensor or number, got TYPE" unless v is a tensor, int, float or bool.
void check_operand(const Value& v, const char* name);

// Neg/Abs/Relu keep int dtypes; the others give f32 for int/bool inputs.
// Neg/Abs of bool is an error.
DType unary_dtype(Unary op, DType in, const char* name);
void unary_kernel(Unary op, const TensorObj& in, TensorObj& out);
// The scalar form (§6): abs/relu of int -> int, everything else -> float.
Value unary_scalar(Unary op, const Value& x, const char* name);

// An operand's element kind without its data: a tensor's dtype or a
// scalar's kind (what the result-dtype rules look at; the JIT's fusion
// knows operands only this way).
struct OperandKind {
  bool tensor = true;
  DType dtype = DType::F32;  // tensor
  ScalarKind scalar = ScalarKind::Float;  // not tensor
};
OperandKind operand_kind(const Value& v);  // v: tensor, int, float or bool
// The dtype two operands promote to (§7), before op-specific adjustments.
DType promote_operands(OperandKind a, OperandKind b);
// Result dtype of a op b (§7): comparisons -> bool; `/` of non-floats -> f32.
DType binary_dtype(Binary op, OperandKind a, OperandKind b);
DType binary_dtype(Binary op, const Value& a, const Value& b);
void binary_kernel(Binary op, const Value& a, const Value& b, TensorObj& out);
// Shape check + dtype + kernel in one call.
Value binary_op(Binary op, const Value& a, const Value& b, const char* name);
// min/max of two scalars: the chosen operand unchanged (ties pick a).
Value minmax_scalar(Binary op, const Value& a, const Value& b, const char* name);

// where(cond, a, b): cond must be bool-typed; result dtype promotes a and b.
Shape where_shape(const Value& c, const Value& a, const Value& b, const char* name);
DType where_dtype(const Value& a, const Value& b);
DType where_dtype(OperandKind a, OperandKind b);
void where_kernel(const Value& c, const Value& a, const Value& b, TensorObj& out);

// Elementwise conversion (float -> int truncates toward zero, NaN -> 0,
// saturating; any -> bool is value != 0).
void cast_kernel(const TensorObj& in, TensorObj& out);
Value tensor_copy(const TensorObj& in);

// -------------------------------------------------------------- reductions
// Normalizes a possibly negative axis; throws "NAME: axis A is out of range for rank R".
int normalize_axis(int64_t axis, size_t rank, const char* name);
Shape reduce_shape(const Shape& in, std::optional<int> axis, bool keepdim);
// sum of int/bool -> i64; mean of int/bool -> f32; argmax -> i64; else the input dtype.
DType reduce_dtype(Reduce op, DType in);
// Throws "NAME: empty tensor" for amax/amin/argmax over zero elements.
void reduce_kernel(Reduce op, const TensorObj& in, std::optional<int> axis, TensorObj& out, const char* name);

// ------------------------------------------------------------------ matmul
// NumPy matmul shapes (1-D promoted and squeezed, batch dims broadcast).
Shape matmul_shape(const Shape& a, const Shape& b, const char* name);
void matmul_kernel(const TensorObj& a, const TensorObj& b, TensorObj& out);

// ---------------------------------------------------------------------- nn
// Float inputs keep their dtype; int/bool inputs give f32.
DType float_result_dtype(DType in);
void softmax_kernel(const TensorObj& in, int axis, TensorObj& out);
// Over the last dim; weight/bias (optional) must have shape [D].
void check_norm_param(const TensorObj& x, const TensorObj* p, const char* what, const char* name);
void layer_norm_kernel(const TensorObj& x, const TensorObj* w, const TensorObj* b, double eps, TensorObj& out);
void rms_norm_kernel(const TensorObj& x, const TensorObj* w, double eps, TensorObj& out);
// q [..., Sq, D], k [..., Sk, D], v [..., Sk, Dv] -> [..., Sq, Dv]; batch dims
// broadcast (right-aligned), except grouped-query attention: where q's head
// dim (the one before Sq) is Hq, k's and v's (the one before Sk) are both
// Hkv, and attention_groups_heads(Hq, Hkv), query head h reads key/value
// head h / (Hq / Hkv). Heads over 1 that differ and do not group (k's and
// v's equal) raise "q has 6 heads, which is not a multiple of k's 4".
Shape attention_shape(const Shape& q, const Shape& k, const Shape& v, const char* name);
void attention_kernel(const TensorObj& q, const TensorObj& k, const TensorObj& v, bool causal,
                      std::optional<double> scale, TensorObj& out);
// Whether Hq query heads group over Hkv key/value heads: Hkv > 1 and Hq a
// multiple g > 1 of it (equal heads, and an Hkv of 1, plainly broadcast).
bool attention_groups_heads(int64_t hq, int64_t hkv);

// --------------------------------------------------------------- shape ops
// Shape from a script list of non-negative ints (rank <= 8); reshape_shape also allows one -1.
Shape parse_shape(const Value& v, const char* name);
Shape reshape_shape(const TensorObj& t, const Value& shape, const char* name);
// dims: a permutation (already normalized).
Shape permute_shape(const Shape& in, std::span<const int> dims);
void permute_kernel(const TensorObj& in, std::span<const int> dims, TensorObj& out);
// Checks every item is a tensor of equal rank with equal non-axis dims.
Shape concat_shape(const Value& list, int64_t axis, const char* name, int* norm_axis);
DType concat_dtype(const Value& list);
void concat_kernel(const Value& list, int axis, TensorObj& out);
// Python slice bounds (negative counts from the end, clamped, nil = end).
struct SliceBounds { int axis; int64_t start; int64_t stop; };
SliceBounds slice_bounds(const TensorObj& t, const Value& axis, const Value& start, const Value& stop,
                         const char* name);
void slice_kernel(const TensorObj& in, SliceBounds b, TensorObj& out);
// Plain element copy between tensors of equal numel (reshape); converts dtype.
void copy_kernel(const TensorObj& in, TensorObj& out);

// ---------------------------------------------------------------- creation
void fill_kernel(TensorObj& out, const Value& v);
void arange_kernel(const Value& start, const Value& step, TensorObj& out);
int64_t arange_count(const Value& start, const Value& stop, const Value& step, const char* name);
void rand_kernel(uint64_t seed, TensorObj& out);
void randn_kernel(uint64_t seed, TensorObj& out);
// tensor(nested_list): shape and inferred dtype; throws on ragged/bad elements.
struct ListLayout { Shape shape; DType inferred; };
ListLayout nested_list_layout(const Value& list, const char* name);
void from_list_kernel(const Value& list, TensorObj& out);

// -------------------------------------------------------------------- misc
bool allclose(const Value& a, const Value& b, double rtol, double atol, const char* name);

}  // namespace tessera
