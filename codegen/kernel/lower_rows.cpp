// Row kernels (lower_region.h): a region with reductions or normalizations,
// one program per row (Region::row_dims: the rows and the row of the row
// operations' input; one program for reductions of every axis, which walk
// the elements in order).
//
// Each row operation needs row statistics, folds along the row of one
// element value: sum, mean: the sum; amax, amin, argmax: the first extreme;
// softmax: the max, then the sum of exp(x - max); layer_norm: the sum, then
// the sum of (x - mean)^2; rms_norm: the sum of x^2. A statistic is
// computed in a pass over the row after the statistics its element value
// needs (its stage), all statistics of a stage in one pass; a last pass
// computes and stores the outputs that vary along the row, and outputs of
// one value per row are stored once. Every statistic follows the
// interpreter's order (vm/tensor/vector_math.h): sums in blocks of 1024
// (a chunk of the row is one block; its f64 sum adds into the row's f64
// total), extremes the first in element order (a chunk's first extreme,
// taken by the row's when it beats it); the row scalars (mean, 1/sqrt(var +
// eps), ...) are the same f64 and f32 operations as nn.cpp's.
//
// Where a K3 kernel knows the row length and one tile holds the row, the
// passes are straight-line code over that tile, so values computed in one
// pass are reused by the next instead of computed again.
#include <limits>
#include <stdexcept>

#include "codegen/kernel/lower_region_internal.h"

namespace tessera::kir::detail {

namespace {

constexpr int64_t kRowChunk = 1024;     // the interpreter's summation block
constexpr int64_t kWholeRowMax = 4096;  // K3: rows up to this long are one tile

// The key of softmax's exp(x - max) in the value cache (region values are >= 0).
int shifted_key(int op) { return -2 - op; }

}  // namespace

void RegionLowerer::row_kernel() {
  const std::vector<int> row = r_.row_dims();
  const bool all_axes = r_.reduces_all_axes();
  shape_ = row;
  rowwise_ = !all_axes && !row.empty();
  // The row length, and whether a K3 kernel knows it.
  std::optional<int64_t> known = 1;
  auto known_dim = [&](int s) -> std::optional<int64_t> {
    if (s == kDimOne) return 1;
    if (static_cast<size_t>(s) < opt_.symbol_values.size()) return opt_.symbol_values[s];
    return std::nullopt;
  };
  if (rowwise_) known = known_dim(row.back());
  else
    for (int s : row) {
      const auto d = known_dim(s);
      known = known && d ? std::optional<int64_t>(*known * *d) : std::nullopt;
    }
  whole_row_ = known && *known <= kWholeRowMax;
  tile_ = whole_row_ ? std::max<int64_t>(16, (*known + 15) / 16 * 16) : kRowChunk;
  Extent rows;
  if (rowwise_)
    for (size_t j = 0; j + 1 < row.size(); ++j)
      if (row[j] != kDimOne) rows.dims.push_back(row[j]);
  k_.grid.push_back(rows);

  for (int s = 0; s < r_.num_symbols; ++s) dim(s);  // before any loop: visible in all of them
  row_ = b_.named(rowwise_ ? b_.program_id(0) : b_.const_int(0), "row");
  range_ = b_.range(tile_);
  if (whole_row_) set_chunk(b_.const_int(0));
  // Passes over chunks hand their last row value to the next pass through
  // the output's row (the interpreter's kernels reuse their output so):
  // where the only output is an f32 value of the rows, nothing a pass
  // computed is computed again.
  if (!whole_row_ && r_.outputs.size() == 1 && rowwise_ && row.back() != kDimOne &&
      r_.type(r_.outputs[0]).dims == row && param_elem(r_.type(r_.outputs[0])) == Elem::F32)
    spill_param_ = output_param(0);
  plan_stats();
  int stages = 0;
  for (const Stat& s : stats_) stages = std::max(stages, s.stage);
  for (int st = 1; st <= stages; ++st) stat_pass(st);

  // The outputs: one value per row, stored once; values along the row, in a last pass.
  std::vector<size_t> along;
  for (size_t i = 0; i < r_.outputs.size(); ++i) {
    const int v = r_.outputs[i];
    std::vector<int> d = r_.type(v).dims;
    bool varies = false;  // Region::valid_output: the row dims, or one value per row
    if (rowwise_) varies = row.back() != kDimOne && d == row;
    else
      for (int x : d) varies = varies || x != kDimOne;
    if (varies) {
      along.push_back(i);
      continue;
    }
    const ValueId x = value(v);
    if (is_tile(x)) throw std::invalid_argument("lower_region: an output of one value per row varies along the row");
    ValueId off = b_.const_int(0);
    if (rowwise_) {
      if (d.size() + 1 == row.size()) d.push_back(kDimOne);  // a reduction without keepdim: one per row
      off = row_offset(d);
    }
    b_.store(output_param(i), off, convert(x, param_elem(r_.type(v))));
  }
  if (along.empty()) return;
  over_row({}, [&](ValueId, const std::vector<ValueId>&) {
    for (size_t i : along) {
      const int v = r_.outputs[i];
      b_.store(output_param(i), offsets(r_.type(v).dims),
               as_tile(value(v), param_elem(r_.type(v))), mask_);
    }
    return std::vector<ValueId>{};
  });
}

void RegionLowerer::set_chunk(ValueId c0) {
  col0_ = c0;
  const ValueId len = rowwise_ ? (shape_.back() == kDimOne ? b_.const_int(1) : dim(shape_.back())) : product(shape_, 0);
  off_ = b_.named(b_.binary(KOp::Add, tile_of(c0), range_), rowwise_ ? "col" : "off");
  mask_ = b_.named(b_.cmp(Pred::Lt, off_, tile_of(len)), "in");
}

std::vector<ValueId> RegionLowerer::over_row(
    const std::vector<ValueId>& inits,
    const std::function<std::vector<ValueId>(ValueId, const std::vector<ValueId>&)>& body) {
  if (whole_row_) return body(col0_, inits);
  const ValueId len = rowwise_ ? (shape_.back() == kDimOne ? b_.const_int(1) : dim(shape_.back())) : product(shape_, 0);
  const ValueId zero = b_.const_int(0), step = b_.const_int(tile_);
  const auto saved = vals_;
  const std::vector<ValueId> args = b_.begin_for(zero, len, step, inits);
  set_chunk(args[0]);
  if (spilled_) vals_[*spilled_] = b_.load(spill_param_, offsets(shape_), mask_);
  const std::vector<ValueId> next = body(args[0], std::vector<ValueId>(args.begin() + 1, args.end()));
  const std::vector<ValueId> results = b_.end_for(next);
  vals_ = saved;  // the body's values are not visible after the loop
  return results;
}

void RegionLowerer::plan_stats() {
  for (size_t i = 0; i < r_.ops.size(); ++i) {
    const RegionOp& o = r_.ops[i];
    const FusionClass fc = op_def(o.op).fusion;
    if (!fc.row()) continue;
    const int op = static_cast<int>(i);
    const int first = 1 + stage_of_value(o.args[0]);
    switch (fc.kind) {
      case FusionKind::Reduce: {
        static constexpr StatKind kReduceStats[] = {StatKind::Sum, StatKind::Sum, StatKind::Max, StatKind::Min,
                                                    StatKind::ArgMax};  // Reduce's order
        static_assert(std::size(kReduceStats) == static_cast<size_t>(Reduce::ArgMax) + 1);
        stats_.push_back(Stat{kReduceStats[static_cast<size_t>(fc.reduce())], op, first});
        break;
      }
      case FusionKind::Softmax:
        stats_.push_back(Stat{StatKind::SoftmaxMax, op, first});
        stats_.push_back(Stat{StatKind::SoftmaxSum, op, first + 1});
        break;
      case FusionKind::LayerNorm:
        stats_.push_back(Stat{StatKind::Mean1, op, first});
        stats_.push_back(Stat{StatKind::Var2, op, first + 1});
        break;
      case FusionKind::RmsNorm: stats_.push_back(Stat{StatKind::SumSq, op, first}); break;
      default: break;
    }
  }
}

// The last stage of the statistics value v's element needs (0: none).
int RegionLowerer::stage_of_value(int v) {
  if (r_.is_input(v)) return 0;
  if (auto it = value_stage_.find(v); it != value_stage_.end()) return it->second;
  const RegionOp& o = r_.op_of(v);
  int st = 0;
  for (int a : o.args) st = std::max(st, stage_of_value(a));
  if (op_def(o.op).fusion.row()) {
    // After the operation's own statistics, which plan_stats adds before
    // any later operation asks (ops are in order).
    const int op = r_.index_of(v);
    for (const Stat& s : stats_)
      if (s.op == op) st = std::max(st, s.stage);
  }
  return value_stage_[v] = st;
}

const RegionLowerer::Stat& RegionLowerer::stat(int op, StatKind kind) const {
  for (const Stat& s : stats_)
    if (s.op == op && s.kind == kind) return s;
  throw std::logic_error("lower_region: no such row statistic");
}

// The element value statistic s folds, in the current chunk (f32 tile).
ValueId RegionLowerer::stat_operand(const Stat& s) {
  const RegionOp& o = r_.ops[static_cast<size_t>(s.op)];
  if (s.kind == StatKind::SoftmaxSum)
    if (auto it = vals_.find(shifted_key(s.op)); it != vals_.end()) return it->second;
  const ValueId x = as_tile(value(o.args[0]), Elem::F32);
  switch (s.kind) {
    case StatKind::SoftmaxSum: {
      const ValueId m = stat(s.op, StatKind::SoftmaxMax).result;
      return vals_[shifted_key(s.op)] = b_.unary(KOp::Exp, b_.binary(KOp::Sub, x, tile_of(m)));
    }
    case StatKind::Var2: {
      const ValueId mean = b_.binary(KOp::Div, stat(s.op, StatKind::Mean1).result, b_.cast(product(shape_, shape_.size() - 1), Elem::F64));
      const ValueId d = b_.binary(KOp::Sub, x, tile_of(b_.cast(mean, Elem::F32)));
      return b_.binary(KOp::Mul, d, d);
    }
    case StatKind::SumSq: return b_.binary(KOp::Mul, x, x);
    default: return x;
  }
}

void RegionLowerer::stat_pass(int stage) {
  std::vector<Stat*> pass;
  for (Stat& s : stats_)
    if (s.stage == stage) pass.push_back(&s);
  const double inf = std::numeric_limits<double>::infinity();
  auto is_sum = [](StatKind k) {
    return k == StatKind::Sum || k == StatKind::SoftmaxSum || k == StatKind::Mean1 || k == StatKind::Var2 ||
           k == StatKind::SumSq;
  };
  // Carried: a sum's f64 total; an extreme's value (and argmax's index).
  std::vector<ValueId> inits;
  for (const Stat* s : pass) {
    if (is_sum(s->kind)) inits.push_back(b_.const_float(0.0, Elem::F64));
    else inits.push_back(b_.const_float(s->kind == StatKind::Min ? inf : -inf));
    if (s->kind == StatKind::ArgMax) inits.push_back(b_.const_int(0));
  }
  const std::vector<ValueId> out = over_row(inits, [&](ValueId c, const std::vector<ValueId>& acc) {
    // The chunk's folds first, then the spill, then the scalars that combine
    // the folds with the row's so far: the tile work is one run of strip
    // operations (one loop over the chunk) that nothing after it reads.
    std::vector<std::pair<ValueId, ValueId>> folds;  // per statistic: the chunk's value (and argmax's index)
    for (const Stat* s : pass) {
      ValueId t = stat_operand(*s);
      // Lanes past the row add +0 to a sum, and never win an extreme.
      const double pad = is_sum(s->kind) ? 0.0 : s->kind == StatKind::Min ? inf : -inf;
      t = b_.select(mask_, t, tile_of(b_.const_float(pad)));
      if (is_sum(s->kind)) {
        folds.emplace_back(b_.reduce(ReduceKind::Sum, t, 0, Elem::F64), 0);
        continue;
      }
      const ReduceKind rk = s->kind == StatKind::Min ? ReduceKind::Min : ReduceKind::Max;
      const ValueId cm = b_.reduce(rk, t, 0);
      folds.emplace_back(cm, s->kind == StatKind::ArgMax ? b_.reduce(ReduceKind::ArgMax, t, 0) : 0);
    }
    spill(*pass.back());
    std::vector<ValueId> next;
    size_t a = 0;
    for (size_t f = 0; f < pass.size(); ++f) {
      const Stat* s = pass[f];
      const auto [cm, ci] = folds[f];
      if (is_sum(s->kind)) {
        next.push_back(whole_row_ ? cm : b_.binary(KOp::Add, acc[a], cm));
        ++a;
        continue;
      }
      if (whole_row_) {
        next.push_back(cm);
        if (s->kind == StatKind::ArgMax) next.push_back(ci);
        a += s->kind == StatKind::ArgMax ? 2 : 1;
        continue;
      }
      // The chunk's first extreme beats the row's so far (a NaN sticks), or it is the first chunk.
      const ValueId yes = b_.const_int(1, Elem::I1), no = b_.const_int(0, Elem::I1);
      const ValueId beats = b_.cmp(s->kind == StatKind::Min ? Pred::Lt : Pred::Gt, cm, acc[a]);
      const ValueId chunk_nan = b_.cmp(Pred::Ne, cm, cm), acc_nan = b_.cmp(Pred::Ne, acc[a], acc[a]);
      ValueId take = b_.select(acc_nan, no, b_.select(chunk_nan, yes, beats));
      take = b_.select(b_.cmp(Pred::Eq, c, b_.const_int(0)), yes, take);
      next.push_back(b_.select(take, cm, acc[a]));
      if (s->kind == StatKind::ArgMax) next.push_back(b_.select(take, b_.binary(KOp::Add, c, ci), acc[a + 1]));
      a += s->kind == StatKind::ArgMax ? 2 : 1;
    }
    return next;
  });
  if (pending_spill_) spilled_ = pending_spill_;
  size_t a = 0;
  for (Stat* s : pass) {
    s->result = out[a++];
    if (s->kind == StatKind::ArgMax) s->index = out[a++];
  }
}

// In a chunk of a pass: the row value the statistic's operation needs
// next (its input, or softmax's exp(x - max)) into the output's row, for
// the next pass to load instead of computing it again.
void RegionLowerer::spill(const Stat& s) {
  pending_spill_.reset();
  if (spill_param_ < 0) return;
  const RegionOp& o = r_.ops[static_cast<size_t>(s.op)];
  const int key = s.kind == StatKind::SoftmaxSum ? shifted_key(s.op) : o.args[0];
  auto it = vals_.find(key);
  if (it == vals_.end() || !is_tile(it->second) || k_.value(it->second).type.elem != Elem::F32) return;
  if (spilled_ != key) b_.store(spill_param_, offsets(shape_), it->second, mask_);
  pending_spill_ = key;
}

// 1 / sqrt(sum / n + eps) in double, rounded to f32: a norm's row scale.
ValueId RegionLowerer::norm_inverse(const RegionOp& o, ValueId sum_f64) {
  const ValueId n = b_.cast(product(shape_, shape_.size() - 1), Elem::F64);
  const ValueId var = b_.binary(KOp::Div, sum_f64, n);
  const ValueId root = b_.unary(KOp::Sqrt, b_.binary(KOp::Add, var, b_.const_float(o.attrs.eps, Elem::F64)));
  return b_.cast(b_.binary(KOp::Div, b_.const_float(1.0, Elem::F64), root), Elem::F32);
}

// A row operation's value: one per row (reductions) or along the row.
ValueId RegionLowerer::row_op(const RegionOp& o, int v) {
  const int op = r_.index_of(v);
  const FusionClass fc = op_def(o.op).fusion;
  // The row's length as a reduction's count: everything for reductions of every axis.
  auto count = [&] { return b_.cast(rowwise_ ? product(shape_, shape_.size() - 1) : product(shape_, 0), Elem::F64); };
  ValueId r = 0;
  switch (fc.kind) {
    case FusionKind::Reduce:
      switch (fc.reduce()) {
        case Reduce::Sum: r = b_.cast(stat(op, StatKind::Sum).result, Elem::F32); break;
        case Reduce::Mean: r = b_.cast(b_.binary(KOp::Div, stat(op, StatKind::Sum).result, count()), Elem::F32); break;
        case Reduce::Max: r = stat(op, StatKind::Max).result; break;
        case Reduce::Min: r = stat(op, StatKind::Min).result; break;
        case Reduce::ArgMax: return stat(op, StatKind::ArgMax).index;
      }
      break;
    case FusionKind::Softmax: {
      const Stat& sum = stat(op, StatKind::SoftmaxSum);
      ValueId e = stat_operand(sum);  // exp(x - max), cached in this chunk
      r = b_.binary(KOp::Div, e, tile_of(b_.cast(sum.result, Elem::F32)));
      break;
    }
    case FusionKind::LayerNorm:
    case FusionKind::RmsNorm: {
      const ValueId x = as_tile(value(o.args[0]), Elem::F32);
      if (fc.kind == FusionKind::LayerNorm) {
        const ValueId mean = b_.binary(KOp::Div, stat(op, StatKind::Mean1).result, b_.cast(product(shape_, shape_.size() - 1), Elem::F64));
        const ValueId centred = b_.binary(KOp::Sub, x, tile_of(b_.cast(mean, Elem::F32)));
        r = b_.binary(KOp::Mul, centred, tile_of(norm_inverse(o, stat(op, StatKind::Var2).result)));
      } else {
        r = b_.binary(KOp::Mul, x, tile_of(norm_inverse(o, stat(op, StatKind::SumSq).result)));
      }
      size_t next = 1;
      if (o.attrs.weight) r = b_.binary(KOp::Mul, r, as_tile(value(o.args[next++]), Elem::F32));
      if (o.attrs.bias) r = b_.binary(KOp::Add, r, as_tile(value(o.args[next++]), Elem::F32));
      break;
    }
    default: throw std::invalid_argument(std::string("lower_region: ") + op_def(o.op).name + " is not a row operation");
  }
  return round_to(r, o.type.dtype);
}

}  // namespace tessera::kir::detail
