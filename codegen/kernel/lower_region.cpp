// Region → kernel IR (lower_region.h): the kernel's dims and params, element
// values (inputs at their broadcast offsets, elementwise operations as the
// interpreter computes them) and elementwise kernels. Row kernels are in
// lower_rows.cpp.
#include "codegen/kernel/lower_region.h"

#include <stdexcept>

#include "codegen/kernel/lower_region_internal.h"
#include "codegen/kernel/mask_fold.h"

namespace tessera::kir {

namespace detail {

namespace {

// Unary and Binary (vm/tensor/elementwise_ops.def) to kernel IR operations.
KOp kernel_op(Unary u) {
  switch (u) {
#define TESSERA_UNARY(Name, ...) case Unary::Name: return KOp::Name;
#define TESSERA_BINARY(...)
#include "vm/tensor/elementwise_ops.def"
#undef TESSERA_UNARY
#undef TESSERA_BINARY
  }
  return KOp::NumOps;
}

struct BinaryLowering {
  KOp op;     // NumOps: not fused
  Pred pred;  // comparisons (op == Cmp)
};
BinaryLowering kernel_op(Binary b) {
  switch (b) {
#define TESSERA_UNARY(...)
#define TESSERA_BINARY(Name, graph, kind, kop, pred) case Binary::Name: return {KOp::kop, Pred::pred};
#include "vm/tensor/elementwise_ops.def"
#undef TESSERA_UNARY
#undef TESSERA_BINARY
  }
  return {KOp::NumOps, Pred::Eq};
}

}  // namespace

Elem compute_elem(DType d) { return dtype_is_float(d) ? Elem::F32 : d == DType::Bool ? Elem::I1 : Elem::I64; }
Elem compute_elem(const RegionType& t) {
  if (t.tensor) return compute_elem(t.dtype);
  return t.scalar == ScalarKind::Float ? Elem::F32 : t.scalar == ScalarKind::Int ? Elem::I64 : Elem::I1;
}

Elem elem_of(DType d) {
  switch (d) {
    case DType::F32: return Elem::F32;
    case DType::F16: return Elem::F16;
    case DType::BF16: return Elem::BF16;
    case DType::I32: return Elem::I32;
    case DType::I64: return Elem::I64;
    case DType::Bool: return Elem::I1;
  }
  return Elem::F32;
}

void RegionLowerer::run() {
  if (r_.outputs.empty()) throw std::invalid_argument("lower_region: the region has no outputs");
  row_kernel_ = r_.has_row_ops();
  for (size_t i = 0; i < r_.ops.size(); ++i) {
    const FusionClass fc = op_def(r_.ops[i].op).fusion;
    if (!fc.elementwise() && !fc.row() && !(i == 0 && r_.leading_step()))
      throw std::invalid_argument(std::string("lower_region: ") + op_def(r_.ops[i].op).name + " does not fuse here");
  }
  declare_dims_and_params();
  if (row_kernel_) row_kernel();
  else elementwise_kernel();
}

void RegionLowerer::declare_dims_and_params() {
  declare_region_inputs(r_, opt_, k_);
  if (r_.leading_step())
    k_.params.push_back(Param{"step", param_elem(r_.ops[0].type), param_dims(r_.ops[0].type), false});
  for (size_t i = 0; i < r_.outputs.size(); ++i)
    k_.params.push_back(Param{"out" + std::to_string(i), param_elem(r_.type(r_.outputs[i])),
                              param_dims(r_.type(r_.outputs[i])), true});
}

void RegionLowerer::elementwise_kernel() {
  tile_ = opt_.tile;
  shape_ = r_.type(r_.outputs[0]).dims;
  for (int v : r_.outputs)
    if (!r_.type(v).tensor || r_.type(v).dims != shape_)
      throw std::invalid_argument("lower_region: outputs of different shapes");
  // Rank >= 2 with a last dim of its own: programs over (chunks of a row,
  // rows), so that every input is read contiguously along the row or is
  // one scalar per row; otherwise chunks of the flattened output.
  rowwise_ = !opt_.flat && shape_.size() >= 2 && shape_.back() != kDimOne;
  Extent e;
  for (size_t j = rowwise_ ? shape_.size() - 1 : 0; j < shape_.size(); ++j)
    if (shape_[j] != kDimOne) e.dims.push_back(shape_[j]);
  e.div = tile_;
  k_.grid.push_back(e);
  if (rowwise_) {
    Extent rows;
    for (size_t j = 0; j + 1 < shape_.size(); ++j)
      if (shape_[j] != kDimOne) rows.dims.push_back(shape_[j]);
    k_.grid.push_back(rows);
  }
  col0_ = b_.named(b_.binary(KOp::Mul, b_.program_id(0), b_.const_int(tile_)), "c0");
  range_ = b_.range(tile_);
  if (rowwise_) {
    row_ = b_.named(b_.program_id(1), "row");
    off_ = b_.named(b_.binary(KOp::Add, tile_of(col0_), range_), "col");
    mask_ = b_.named(b_.cmp(Pred::Lt, off_, tile_of(dim(shape_.back()))), "in");
  } else {
    off_ = b_.named(b_.binary(KOp::Add, tile_of(col0_), range_), "off");
    mask_ = b_.named(b_.cmp(Pred::Lt, off_, tile_of(product(shape_, 0))), "in");
  }
  for (size_t i = 0; i < r_.outputs.size(); ++i) {
    const int v = r_.outputs[i];
    const Elem to = param_elem(r_.type(v));
    b_.store(output_param(i), offsets(shape_), as_tile(value(v), to), mask_);
  }
}

void RegionLowerer::epilogue(ValueId step, ValueId off, ValueId mask) {
  in_step_kernel_ = true;
  shape_ = r_.ops.at(0).type.dims;
  tile_shape_ = k_.value(off).type.shape;
  off_ = off;
  mask_ = mask;
  // The step's result as the interpreter stores it (rounded to its dtype),
  // then as its consumers compute with it.
  vals_[r_.value_of_op(0)] = round_to(step, r_.ops[0].type.dtype);
  for (size_t i = 0; i < r_.outputs.size(); ++i) {
    const int v = r_.outputs[i];
    b_.store(output_param(i), off_, as_tile(value(v), param_elem(r_.type(v))), mask_);
  }
}

ValueId RegionLowerer::dim(int s) {
  auto it = dims_.find(s);
  if (it != dims_.end()) return it->second;
  return dims_[s] = b_.named(b_.dim(s), "s" + std::to_string(s));
}

ValueId RegionLowerer::product(const std::vector<int>& dims, size_t from) {
  std::optional<ValueId> p;
  for (size_t j = from; j < dims.size(); ++j)
    if (dims[j] != kDimOne) p = p ? b_.binary(KOp::Mul, *p, dim(dims[j])) : dim(dims[j]);
  return p ? *p : b_.const_int(1);
}

// Row-wise: the offset of the first element of this program's row in an
// input of `dims` (right-aligned to the iteration shape), without its last
// dim; scalar index math once per program.
ValueId RegionLowerer::row_offset(const std::vector<int>& dims) {
  const size_t lead = shape_.size() - dims.size();
  std::optional<ValueId> sum;
  // The input's stride of dim k: the product of its dims after k (none: 1).
  ValueId stride = 0;
  bool strided = dims.back() != kDimOne;
  if (strided) stride = dim(dims.back());
  for (size_t k = dims.size() - 1; k-- > 0;) {
    if (dims[k] == kDimOne) continue;
    const size_t j = lead + k;
    // index along axis j of the row: (row / S_j) % D_j, S_j the leading
    // dims after j; the % dropped for axis 0.
    ValueId idx = row_;
    std::vector<int> after(shape_.begin() + static_cast<long>(j) + 1, shape_.end() - 1);
    if (!after.empty()) idx = b_.binary(KOp::Div, idx, product(after, 0));
    if (j > 0) idx = b_.binary(KOp::Rem, idx, dim(shape_[j]));
    ValueId term = strided ? b_.binary(KOp::Mul, idx, stride) : idx;
    sum = sum ? b_.binary(KOp::Add, *sum, term) : term;
    stride = strided ? b_.binary(KOp::Mul, stride, dim(dims[k])) : dim(dims[k]);
    strided = true;
  }
  return sum ? *sum : b_.const_int(0);
}

// Offsets of an input of `dims` read at the iteration's offsets (a scalar
// offset: the input does not vary along this program's row).
ValueId RegionLowerer::offsets(const std::vector<int>& dims) {
  if (rowwise_) {
    ValueId base = dims.empty() ? b_.const_int(0) : row_offset(dims);
    if (dims.empty() || dims.back() == kDimOne) return base;
    // splat(row + col0) + range: a contiguous access.
    return b_.binary(KOp::Add, tile_of(b_.binary(KOp::Add, base, col0_)), range_);
  }
  if (dims == shape_) return off_;
  const size_t lead = shape_.size() - dims.size();
  std::optional<ValueId> sum;
  std::optional<ValueId> stride;  // the input's stride of dim k (1 at first)
  for (size_t k = dims.size(); k-- > 0;) {
    if (dims[k] == kDimOne) continue;
    const size_t j = lead + k;
    // index along output axis j: (off / S_j) % D_j, the % dropped for axis 0.
    ValueId idx = off_;
    if (j + 1 < shape_.size()) idx = b_.binary(KOp::Div, idx, tile_of(product(shape_, j + 1)));
    if (j > 0) idx = b_.binary(KOp::Rem, idx, tile_of(dim(shape_[j])));
    ValueId term = stride ? b_.binary(KOp::Mul, idx, tile_of(*stride)) : idx;
    sum = sum ? b_.binary(KOp::Add, *sum, term) : term;
    stride = stride ? b_.binary(KOp::Mul, *stride, dim(dims[k])) : dim(dims[k]);
  }
  return sum ? *sum : tile_of(b_.const_int(0));  // all dims 1: element 0
}

ValueId RegionLowerer::value(int v) {
  auto it = vals_.find(v);
  if (it != vals_.end()) return it->second;
  ValueId out;
  if (r_.is_input(v) || (r_.leading_step() && r_.index_of(v) == 0)) out = load_input(v);
  else if (op_def(r_.op_of(v).op).fusion.row()) out = row_op(r_.op_of(v), v);
  else out = elementwise_op(r_.op_of(v));
  return vals_[v] = out;
}

ValueId RegionLowerer::load_input(int v) {
  const RegionType& t = r_.type(v);
  // params: the inputs in their order, then the matmul's result
  const int param = r_.is_input(v) ? r_.index_of(v) : step_param();
  if (!t.tensor) return b_.load(param, b_.const_int(0));
  const ValueId off = offsets(t.dims);
  // A scalar offset (a row-wise program's broadcast input): one element per row.
  const ValueId x = is_tile(off) ? b_.load(param, off, mask_) : b_.load(param, off);
  return convert(x, compute_elem(t));
}

ValueId RegionLowerer::as_tile(ValueId x, Elem to) {
  x = convert(x, to);
  return is_tile(x) ? x : tile_of(x);
}

ValueId RegionLowerer::convert(ValueId x, Elem to) { return k_.value(x).type.elem == to ? x : b_.cast(x, to); }

// An elementwise operation: on scalars where every operand is one (values
// that do not vary along the iteration), else on tiles.
ValueId RegionLowerer::elementwise_op(const RegionOp& o) {
  const FusionClass fc = op_def(o.op).fusion;
  const Elem ce = compute_elem(o.type.dtype);
  std::vector<ValueId> xs;
  bool any_tile = false;
  for (int a : o.args) {
    xs.push_back(value(a));
    any_tile = any_tile || is_tile(xs.back());
  }
  auto operand = [&](size_t i, Elem e) { return any_tile ? as_tile(xs[i], e) : convert(xs[i], e); };
  ValueId r;
  switch (fc.kind) {
    case FusionKind::Unary: {
      ValueId x = operand(0, ce);
      if (fc.unary() == Unary::Relu && ce != Elem::F32) {
        const ValueId zero = b_.const_int(0);
        r = b_.binary(KOp::Max, x, any_tile ? tile_of(zero) : zero);
      } else {
        r = b_.unary(kernel_op(fc.unary()), x);
      }
      break;
    }
    case FusionKind::Binary: {
      const BinaryLowering bl = kernel_op(fc.binary());
      if (bl.op == KOp::NumOps) throw std::invalid_argument("lower_region: integer division is not fused");
      if (bl.op == KOp::Cmp) {
        // Both float (f32) or both int (i64), as Region::add admits them.
        const Elem e = compute_elem(r_.type(o.args[0])) == Elem::F32 ? Elem::F32 : Elem::I64;
        r = b_.cmp(bl.pred, operand(0, e), operand(1, e));
      } else {
        r = b_.binary(bl.op, operand(0, ce), operand(1, ce));
      }
      break;
    }
    case FusionKind::Where: r = b_.select(operand(0, Elem::I1), operand(1, ce), operand(2, ce)); break;
    case FusionKind::Cast: {
      // Through the target dtype (rounding, or for floats to ints saturating at
      // its range with nan -> 0, as the interpreter's cast_kernel),
      // then back to the compute type.
      ValueId x = xs[0];
      const Elem target = elem_of(o.attrs.cast_to);
      // i64 to a float type through f64, rounding twice as the interpreter does
      // (2**60 + 2**36 + 1 is 2**60 in f32 so, not 2**60 + 2**37).
      if (elem_is_float(target) && k_.value(x).type.elem == Elem::I64) x = b_.cast(x, Elem::F64);
      return convert(convert(x, target), ce);
    }
    default: throw std::invalid_argument(std::string("lower_region: ") + op_def(o.op).name + " is not elementwise");
  }
  return round_to(r, o.type.dtype);
}

// A computed value rounded (f16, bf16) or wrapped (i32) to its dtype, as
// the interpreter stores each operation's result.
ValueId RegionLowerer::round_to(ValueId x, DType d) {
  const Elem e = elem_of(d);
  if (e == Elem::F16 || e == Elem::BF16 || e == Elem::I32) return convert(b_.cast(x, e), compute_elem(d));
  return x;
}

}  // namespace detail

void declare_region_inputs(const Region& r, const RegionLowering& opt, Kernel& k) {
  for (int s = 0; s < r.num_symbols; ++s) k.dims.push_back("s" + std::to_string(s));
  if (!opt.symbol_values.empty()) {
    if (opt.symbol_values.size() != static_cast<size_t>(r.num_symbols))
      throw std::invalid_argument("lower_region: one value per symbol");
    k.dim_values = opt.symbol_values;
  }
  for (size_t i = 0; i < r.inputs.size(); ++i)
    k.params.push_back(Param{"in" + std::to_string(i), param_elem(r.inputs[i]), param_dims(r.inputs[i]), false});
}

std::vector<DimRef> param_dims(const RegionType& t) {
  std::vector<DimRef> d;
  for (int s : t.dims) d.push_back(s == kDimOne ? DimRef{-1, 1} : DimRef{s, 0});
  return d;
}

Elem param_elem(const RegionType& t) {
  if (t.tensor) return detail::elem_of(t.dtype);
  return t.scalar == ScalarKind::Float ? Elem::F32 : t.scalar == ScalarKind::Int ? Elem::I64 : Elem::I1;
}

Kernel lower_region(const Region& r, const std::string& name, const RegionLowering& opt) {
  if (opt.tile < 1) throw std::invalid_argument("lower_region: tile must be positive");
  if (r.types_only) throw std::invalid_argument("lower_region: a region of types only has no kernel");
  Kernel k;
  k.name = name;
  detail::RegionLowerer(r, opt, k).run();
  fold_masks(k);
  return k;
}

}  // namespace tessera::kir
