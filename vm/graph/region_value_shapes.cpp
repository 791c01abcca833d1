// The types of the operations a region of types only (region.h) types
// beyond the elementwise, row, matmul and attention rules: those that move
// axes (transpose, permute: their axes are RegionAttrs::axes) and those
// whose result shape comes from values (a shape operand: zeros ones full
// randn rand reshape; a count: slice arange concat; tensor() of a nested
// list of numbers, one scalar operand each, its dims RegionAttrs::axes) or
// is the operand's (all_reduce, broadcast, recv's like). all_gather and
// reduce_scatter stay untyped: their results enter the graph where used.
// One rule per operation, in a table.
//
// Where no operand gives a result dim (slice's axis, arange's length,
// reshape's -1, concat's axis, tensor()'s length but 1) the rule makes a new symbol of unknown size
// (-1); the recorder reads its size off the result (TraceShapes). The
// interpreter's checks that depend on values (a negative dim, a numel that
// does not match, bounds) stay the helper's: it raises as before, and its
// result's type is the rule's whenever it returns.
#include "vm/graph/region.h"

#include "vm/tensor/tensor.h"

namespace tessera {

namespace {

using Types = std::vector<RegionType>;

// A tensor type with these dims, or none where the rank is not one a
// tensor may have.
std::optional<RegionType> tensor_of(DType dt, std::vector<int> dims) {
  if (dims.size() > kMaxRank) return std::nullopt;
  RegionType t;
  t.dtype = dt;
  t.dims = std::move(dims);
  return t;
}

// The axis `ax` of a tensor of rank `rank` (negative: from the end), or
// -1 where the interpreter raises.
int axis_in(int ax, size_t rank) {
  const int r = static_cast<int>(rank);
  const int a = ax < 0 ? ax + r : ax;
  return a >= 0 && a < r ? a : -1;
}

bool is_shape(const RegionType& t) { return !t.tensor && t.shape; }

bool has_infer(const RegionType& t) {
  for (int d : t.dims)
    if (d == kDimInfer) return true;
  return false;
}

}  // namespace

bool Region::add_value_shaped(OpId op, std::vector<int>& args, const Types& ts, const RegionAttrs& attrs,
                              std::optional<int>& out) {
  // What each rule gives: the result type and the attributes it keeps.
  struct Typed {
    RegionType type;
    RegionAttrs kept;
  };
  using Rule = std::optional<Typed> (*)(Region& r, const Types& ts, const RegionAttrs& a);
  // zeros ones randn rand: f32 unless dtype= (randn, rand: a float dtype).
  static constexpr Rule kCreate = [](Region&, const Types& ts, const RegionAttrs& a) -> std::optional<Typed> {
    if (ts.size() != 1 || !is_shape(ts[0]) || has_infer(ts[0]) || a.infer_dtype) return std::nullopt;
    auto t = tensor_of(a.cast_to, ts[0].dims);
    if (!t) return std::nullopt;
    RegionAttrs kept;
    kept.cast_to = a.cast_to;
    return Typed{*t, kept};
  };
  static constexpr Rule kRandom = [](Region& r, const Types& ts, const RegionAttrs& a) -> std::optional<Typed> {
    if (!dtype_is_float(a.cast_to)) return std::nullopt;  // the interpreter raises
    return kCreate(r, ts, a);
  };
  // The collectives whose result is of their operand's type.
  static constexpr Rule kOperandType = [](Region&, const Types& ts, const RegionAttrs&) -> std::optional<Typed> {
    if (ts.size() != 1 || !ts[0].tensor) return std::nullopt;
    return Typed{ts[0], RegionAttrs{}};
  };
  struct Row {
    OpId op;
    Rule rule;
  };
  static constexpr Row kRules[] = {
      {OpId::Zeros, kCreate},
      {OpId::Ones, kCreate},
      {OpId::Randn, kRandom},
      {OpId::Rand, kRandom},
      {OpId::Full,  // full(shape, value): the value a number or bool
       [](Region& r, const Types& ts, const RegionAttrs& a) -> std::optional<Typed> {
         if (ts.size() != 2 || ts[1].tensor || ts[1].shape) return std::nullopt;
         return kCreate(r, Types{ts[0]}, a);
       }},
      {OpId::Arange,  // arange(stop) / arange(start, stop[, step]): i64 for ints, else f32
       [](Region& r, const Types& ts, const RegionAttrs& a) -> std::optional<Typed> {
         if (ts.empty() || ts.size() > 3 || (ts.size() == 3 && !a.step)) return std::nullopt;
         bool ints = true;
         for (const RegionType& t : ts) {
           if (t.tensor || t.shape || t.scalar == ScalarKind::Bool) return std::nullopt;
           ints = ints && t.scalar == ScalarKind::Int;
         }
         RegionAttrs kept;
         kept.step = a.step;
         kept.infer_dtype = a.infer_dtype;
         kept.cast_to = a.infer_dtype ? (ints ? DType::I64 : DType::F32) : a.cast_to;
         return Typed{*tensor_of(kept.cast_to, {r.new_symbol()}), kept};
       }},
      {OpId::Reshape,  // reshape(x, shape): the shape's dims, its -1 a new symbol
       [](Region& r, const Types& ts, const RegionAttrs&) -> std::optional<Typed> {
         if (ts.size() != 2 || !ts[0].tensor || !is_shape(ts[1])) return std::nullopt;
         std::vector<int> dims = ts[1].dims;
         int infers = 0;
         for (int& d : dims)
           if (d == kDimInfer && ++infers == 1) d = r.new_symbol();
         if (infers > 1) return std::nullopt;  // the interpreter raises
         auto t = tensor_of(ts[0].dtype, std::move(dims));
         if (!t) return std::nullopt;
         return Typed{*t, RegionAttrs{}};
       }},
      {OpId::Transpose,  // transpose(x, dim0, dim1)
       [](Region&, const Types& ts, const RegionAttrs& a) -> std::optional<Typed> {
         if (ts.size() != 1 || !ts[0].tensor || a.axes.size() != 2) return std::nullopt;
         Typed out{ts[0], RegionAttrs{}};
         for (int d : a.axes) {
           const int ax = axis_in(d, ts[0].dims.size());
           if (ax < 0) return std::nullopt;
           out.kept.axes.push_back(ax);
         }
         std::swap(out.type.dims[static_cast<size_t>(out.kept.axes[0])], out.type.dims[static_cast<size_t>(out.kept.axes[1])]);
         return out;
       }},
      {OpId::Permute,  // permute(x, dims): dims a permutation of the axes
       [](Region&, const Types& ts, const RegionAttrs& a) -> std::optional<Typed> {
         if (ts.size() != 1 || !ts[0].tensor || a.axes.size() != ts[0].dims.size()) return std::nullopt;
         Typed out{ts[0], RegionAttrs{}};
         std::vector<bool> used(a.axes.size(), false);
         for (size_t k = 0; k < a.axes.size(); ++k) {
           const int ax = axis_in(a.axes[k], a.axes.size());
           if (ax < 0 || used[static_cast<size_t>(ax)]) return std::nullopt;
           used[static_cast<size_t>(ax)] = true;
           out.kept.axes.push_back(ax);
           out.type.dims[k] = ts[0].dims[static_cast<size_t>(ax)];
         }
         return out;
       }},
      {OpId::Slice,  // slice(x, axis, start, stop): the axis's dim a new symbol
       [](Region& r, const Types& ts, const RegionAttrs& a) -> std::optional<Typed> {
         if (ts.size() != 1 || !ts[0].tensor || !a.axis) return std::nullopt;
         const int ax = axis_in(*a.axis, ts[0].dims.size());
         if (ax < 0) return std::nullopt;
         Typed out{ts[0], RegionAttrs{}};
         out.kept.axis = ax;
         out.type.dims[static_cast<size_t>(ax)] = r.new_symbol();
         return out;
       }},
      {OpId::Concat,  // concat([x, y, ...], axis=): the other dims one symbol, the axis's a new one
       [](Region& r, const Types& ts, const RegionAttrs& a) -> std::optional<Typed> {
         if (ts.empty() || !a.axis) return std::nullopt;
         for (const RegionType& t : ts)
           if (!t.tensor || t.dims.size() != ts[0].dims.size()) return std::nullopt;
         const int ax = axis_in(*a.axis, ts[0].dims.size());
         if (ax < 0) return std::nullopt;
         Typed out{ts[0], RegionAttrs{}};
         out.kept.axis = ax;
         for (const RegionType& t : ts) {
           out.type.dtype = promote_dtypes(out.type.dtype, t.dtype);
           for (size_t k = 0; k < t.dims.size(); ++k) {
             if (static_cast<int>(k) == ax) continue;
             const int x = out.type.dims[k], y = t.dims[k];
             // Equal where the interpreter concatenates: one symbol, the older.
             if (!r.unify(x, y)) return std::nullopt;
             for (int& d : out.type.dims)
               if (d == std::max(x, y)) d = std::min(x, y);
           }
         }
         out.type.dims[static_cast<size_t>(ax)] = r.new_symbol();
         return out;
       }},
      {OpId::Tensor,  // tensor([[a, b], ...]) of numbers: the list's dims (axes), the dtype its elements' kinds give
       [](Region& r, const Types& ts, const RegionAttrs& a) -> std::optional<Typed> {
         if (a.axes.empty() || a.axes.size() > kMaxRank) return std::nullopt;
         size_t numel = 1;
         for (int d : a.axes) {
           if (d < 0) return std::nullopt;
           numel *= static_cast<size_t>(d);
         }
         if (numel != ts.size()) return std::nullopt;
         bool any_float = false, any_int = false;
         for (const RegionType& t : ts) {
           if (t.tensor || t.shape) return std::nullopt;
           any_float = any_float || t.scalar == ScalarKind::Float;
           any_int = any_int || t.scalar == ScalarKind::Int;
         }
         RegionAttrs kept;
         kept.axes = a.axes;
         kept.infer_dtype = a.infer_dtype;
         kept.cast_to = !a.infer_dtype ? a.cast_to
                        : any_float     ? DType::F32
                        : any_int       ? DType::I64
                        : ts.empty()    ? DType::F32
                                        : DType::Bool;
         std::vector<int> dims;
         for (int d : a.axes) dims.push_back(d == 1 ? kDimOne : r.new_symbol());
         return Typed{*tensor_of(kept.cast_to, std::move(dims)), kept};
       }},
      {OpId::AllReduce, kOperandType},      // every rank's tensor reduced
      {OpId::BroadcastFrom, kOperandType},  // the root's tensor
      {OpId::Recv,  // recv(like, src): like's type
       [](Region& r, const Types& ts, const RegionAttrs& a) -> std::optional<Typed> {
         if (ts.size() != 2 || ts[1].tensor || ts[1].shape || ts[1].scalar != ScalarKind::Int) return std::nullopt;
         return kOperandType(r, Types{ts[0]}, a);
       }},
  };
  for (const Row& row : kRules) {
    if (row.op != op) continue;
    std::optional<Typed> t = row.rule(*this, ts, attrs);
    if (t) out = push_op(RegionOp{op, std::move(args), std::move(t->kept), std::move(t->type)});
    return true;
  }
  return false;
}

}  // namespace tessera
