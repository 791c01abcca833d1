// Attention as one kernel of the kernel IR (lower_region.h,
// lower_attention): a program per block of `rows` query rows of one batch
// entry (and one chunk of `value` output columns) walks the keys in blocks
// of `keys` with an online softmax:
//
//   S = Q Kᵀ (dot over the head dim in chunks of `head`), S * scale, masked
//   to -inf past the keys (and above the diagonal when causal; key blocks
//   wholly above it are not visited); m_new = max(m, rowmax S);
//   P = exp(S - m_new); alpha = exp(m - m_new); l = l * alpha + rowsum P;
//   acc = acc * alpha + P V; at the end acc / l (0 where l is 0: no
//   visible key).
//
// f32 inputs (and mixed dtypes): every step is the same f32 operation on
// zero-padded tiles as the interpreter's attention_block (vm/tensor/nn.cpp)
// with its 64-row, 64-key tiles, so the kernel computes the interpreter's
// bits; the tests run it against the interpreter.
//
// f16 or bf16 inputs (all three alike): FlashAttention-2's numerics. Q, K
// and V stay half, so both products are dots of half tiles with f32
// accumulators (the CUDA emitter runs them on the tensor cores,
// cuda_emitter_mma.cpp); the softmax is in base 2 with log2(e) folded into
// the scale (exp2 is the GPU's ex2 instruction); P is rounded to the input
// dtype for the second product. Results differ from the interpreter's f32
// computation by that rounding (the tolerances of docs/gpu.md).
//
// Grouped-query attention: on the head axis (the one before the last two)
// a key/value tensor with Hkv heads, Hkv dividing the output's H, serves
// query head h with its head h / (H / Hkv) (equal counts: h itself).
//
// The trace's consumers of attention's result (attention_writes_outputs:
// elementwise operations, outputs of its shape) are computed on the output
// tile before it is stored, as the region's kernel would compute them
// (RegionLowerer::epilogue): the region is then one kernel, and attention's
// result never goes through memory.
//
// K2 kernels take every shape (tiles of 64, the value dim split over grid
// axis 2); K3 kernels know the dims and take the head and value dims whole
// (rounded up to 16, up to 256 for f16/bf16 and 128 for f32), loading Q's
// block once per program; wider dims keep K2's chunks, with the dims
// constant.
#include <algorithm>
#include <limits>
#include <stdexcept>

#include "codegen/kernel/lower_region.h"
#include "codegen/kernel/lower_region_internal.h"
#include "codegen/kernel/mask_fold.h"

namespace tessera::kir {

namespace {

int64_t round_up(int64_t n, int64_t b) { return (n + b - 1) / b * b; }

// A symbol's value in a K3 kernel (nullopt: a parameter).
std::optional<int64_t> symbol_value(const RegionLowering& opt, int s) {
  if (s == kDimOne) return 1;
  if (static_cast<size_t>(s) >= opt.symbol_values.size()) return std::nullopt;
  return opt.symbol_values[static_cast<size_t>(s)];
}

bool half_inputs(const Region& r, const RegionOp& o) {
  const DType q = r.type(o.args[0]).dtype;
  return (q == DType::F16 || q == DType::BF16) && r.type(o.args[1]).dtype == q && r.type(o.args[2]).dtype == q;
}

class AttentionLowering {
 public:
  AttentionLowering(const Region& r, const RegionLowering& opt, Kernel& k, const AttentionTiles& t)
      : r_(r), opt_(opt), k_(k), b_(k), t_(t) {}

  void run() {
    const RegionOp& o = r_.ops.at(0);
    if (o.op != OpId::Attention) throw std::invalid_argument("lower_attention: the region does not start with attention");
    declare_region_inputs(r_, opt_, k_);
    writes_outputs_ = attention_writes_outputs(r_);
    if (writes_outputs_) {
      for (size_t i = 0; i < r_.outputs.size(); ++i)
        k_.params.push_back(Param{"out" + std::to_string(i), param_elem(r_.type(r_.outputs[i])),
                                  param_dims(r_.type(r_.outputs[i])), true});
    } else {
      k_.params.push_back(Param{"out", param_elem(o.type), param_dims(o.type), true});
    }
    q_ = r_.type(o.args[0]).dims;
    kd_ = r_.type(o.args[1]).dims;
    vd_ = r_.type(o.args[2]).dims;
    out_ = o.type.dims;
    half_ = half_inputs(r_, o);
    in_elem_ = k_.params[static_cast<size_t>(r_.index_of(o.args[0]))].elem;
    Extent blocks;
    if (q_[q_.size() - 2] != kDimOne) blocks.dims.push_back(q_[q_.size() - 2]);
    blocks.div = t_.rows;
    Extent batch;
    for (size_t j = 0; j + 2 < out_.size(); ++j)
      if (out_[j] != kDimOne) batch.dims.push_back(out_[j]);
    Extent columns;
    if (vd_.back() != kDimOne) columns.dims.push_back(vd_.back());
    columns.div = t_.value;
    k_.grid = {blocks, batch, columns};
    body(o);
  }

 private:
  ValueId dim(int s) { return s == kDimOne ? b_.const_int(1) : b_.dim(s); }
  ValueId ci(int64_t v) { return b_.const_int(v); }
  ValueId tile(ValueId scalar, int64_t rows, int64_t cols) { return b_.splat(scalar, {rows, cols}); }
  ValueId zeros(int64_t rows, int64_t cols) { return tile(b_.const_float(0.0), rows, cols); }

  // The element offset of this program's batch entry in a tensor of `dims`
  // (batch dims right-aligned to the output's, size-1 dims broadcast, the
  // head axis of a key/value tensor with fewer heads grouped), times its
  // last two dims.
  ValueId batch_base(const std::vector<int>& dims, ValueId entry) {
    const size_t lead = out_.size() - dims.size();
    ValueId base = ci(0);
    ValueId stride = b_.binary(KOp::Mul, dim(dims[dims.size() - 2]), dim(dims.back()));
    for (size_t k = dims.size() - 2; k-- > 0;) {
      const size_t j = lead + k;  // the output's batch axis
      if (dims[k] == kDimOne) continue;
      ValueId idx = entry;
      for (size_t a = j + 1; a + 2 < out_.size(); ++a) idx = b_.binary(KOp::Div, idx, dim(out_[a]));
      idx = b_.binary(KOp::Rem, idx, dim(out_[j]));
      if (j + 3 == out_.size() && dims[k] != out_[j])  // heads: h / (H / Hkv)
        idx = b_.binary(KOp::Div, idx, b_.binary(KOp::Div, dim(out_[j]), dim(dims[k])));
      base = b_.binary(KOp::Add, base, b_.binary(KOp::Mul, idx, stride));
      stride = b_.binary(KOp::Mul, stride, dim(dims[k]));
    }
    return base;
  }

  // [rows, cols] tiles of the row index i and the column index j.
  ValueId row_index(int64_t rows, int64_t cols) { return b_.broadcast(b_.range(rows), 1, cols); }
  ValueId col_index(int64_t rows, int64_t cols) { return b_.broadcast(b_.range(cols), 0, rows); }

  // Elements (r0 + i, c0 + j) of a row-major [nrows, ncols] matrix at `base`,
  // zero where r0 + i >= nrows or c0 + j >= ncols; transposed: element
  // (r0 + j, c0 + i) as (i, j). A block load (the GPU copies it into shared
  // memory for a tensor-core product), as stored (half) on the half path,
  // else f32.
  ValueId load_block(int param, ValueId base, ValueId r0, ValueId c0, ValueId nrows, ValueId ncols, int64_t rows,
                     int64_t cols, bool transposed) {
    const ValueId x = b_.load_block(param, base, r0, c0, nrows, ncols, ncols, rows, cols, transposed);
    const Elem e = k_.params[static_cast<size_t>(param)].elem;
    return e == Elem::F32 || half_ ? x : b_.cast(x, Elem::F32);
  }

  // The scale scores are multiplied by: given, or 1/sqrt(d) in double,
  // rounded to f32; on the half path times log2(e) (exp2 then gives exp).
  ValueId scale_of(const RegionOp& o, ValueId d) {
    constexpr double kLog2e = 1.4426950408889634;
    const double by = half_ ? kLog2e : 1.0;
    if (o.attrs.scale) return b_.const_float(static_cast<double>(static_cast<float>(*o.attrs.scale)) * by);
    ValueId s = b_.binary(KOp::Div, b_.const_float(1.0, Elem::F64), b_.unary(KOp::Sqrt, b_.cast(d, Elem::F64)));
    if (half_) s = b_.binary(KOp::Mul, s, b_.const_float(by, Elem::F64));
    return b_.cast(s, Elem::F32);
  }

  void body(const RegionOp& o) {
    const int64_t R = t_.rows, B = t_.keys, H = t_.head, DV = t_.value;
    const int q = r_.index_of(o.args[0]), kk = r_.index_of(o.args[1]), v = r_.index_of(o.args[2]);
    const ValueId entry = b_.named(b_.program_id(1), "entry");
    const ValueId q0 = b_.named(b_.binary(KOp::Mul, b_.program_id(0), ci(R)), "q0");
    const ValueId c0 = b_.named(b_.binary(KOp::Mul, b_.program_id(2), ci(DV)), "c0");
    const ValueId sq = dim(q_[q_.size() - 2]), d = dim(q_.back()), sk = dim(kd_[kd_.size() - 2]), dv = dim(vd_.back());
    const ValueId qbase = batch_base(q_, entry), kbase = batch_base(kd_, entry), vbase = batch_base(vd_, entry);
    const ValueId obase = batch_base(out_, entry);
    const ValueId scale = scale_of(o, d);
    const double inf = std::numeric_limits<double>::infinity();
    const KOp exp = half_ ? KOp::Exp2 : KOp::Exp;
    // The head dim in one chunk (a K3 kernel that knows it): Q's block is loaded once.
    const std::optional<int64_t> dval = symbol_value(opt_, q_.back());
    const bool one_chunk = dval && *dval <= H;
    const ValueId qwhole = one_chunk ? load_block(q, qbase, q0, ci(0), sq, d, R, H, false) : ValueId{0};
    const ValueId kend = o.attrs.causal ? b_.binary(KOp::Min, sk, b_.binary(KOp::Add, q0, ci(R))) : sk;
    const ValueId m0 = b_.splat(b_.const_float(-inf), {R});
    const ValueId l0 = b_.splat(b_.const_float(0.0), {R});
    const std::vector<ValueId> it = b_.begin_for(ci(0), kend, ci(B), {m0, l0, zeros(R, DV)});
    const ValueId k0 = it[0], m = it[1], l = it[2], acc = it[3];
    // With the head dim in one chunk, K's block and (half path) then V's
    // are loaded first: the GPU copies them (cp.async) in that order, waits
    // for K's at the scores' product, and V's copy flies while the scores
    // and the softmax are computed. Otherwise V is loaded where it is used
    // (the chunks' products wait for every copy started before them).
    const bool early_v = half_ && one_chunk;
    const ValueId k_whole = one_chunk ? load_block(kk, kbase, k0, ci(0), sk, d, H, B, true) : ValueId{0};
    const ValueId v_early = early_v ? load_block(v, vbase, k0, c0, sk, dv, B, DV, false) : ValueId{0};
    // S = Q Kᵀ over the head dim in chunks, then * scale, then the masks.
    ValueId s_raw;
    if (one_chunk) {
      s_raw = b_.dot(qwhole, k_whole, zeros(R, B));
    } else {
      const std::vector<ValueId> sd = b_.begin_for(ci(0), d, ci(H), {zeros(R, B)});
      const ValueId qc = load_block(q, qbase, q0, sd[0], sq, d, R, H, false);
      const ValueId ktc = load_block(kk, kbase, k0, sd[0], sk, d, H, B, true);
      s_raw = b_.end_for({b_.dot(qc, ktc, sd[1])})[0];
    }
    ValueId s = b_.binary(KOp::Mul, s_raw, tile(scale, R, B));
    const ValueId key = b_.binary(KOp::Add, tile(k0, R, B), col_index(R, B));
    const ValueId ninf = tile(b_.const_float(-inf), R, B);
    s = b_.select(b_.cmp(Pred::Ge, key, tile(sk, R, B)), ninf, s);
    if (o.attrs.causal) {
      const ValueId query = b_.binary(KOp::Add, tile(q0, R, B), row_index(R, B));
      s = b_.select(b_.cmp(Pred::Gt, key, query), ninf, s);
    }
    // The online softmax step.
    const ValueId m_new = b_.binary(KOp::Max, m, b_.reduce(ReduceKind::Max, s, 1));
    const ValueId p = b_.unary(exp, b_.binary(KOp::Sub, s, b_.broadcast(m_new, 1, B)));
    const ValueId alpha = b_.unary(exp, b_.binary(KOp::Sub, m, m_new));
    const ValueId l_new = b_.binary(KOp::Add, b_.binary(KOp::Mul, l, alpha), b_.reduce(ReduceKind::Sum, p, 1));
    const ValueId scaled = b_.binary(KOp::Mul, acc, b_.broadcast(alpha, 1, DV));
    const ValueId vt = early_v ? v_early : load_block(v, vbase, k0, c0, sk, dv, B, DV, false);
    const ValueId pv = half_ ? b_.cast(p, in_elem_) : p;
    const std::vector<ValueId> res = b_.end_for({m_new, l_new, b_.dot(pv, vt, scaled)});
    // acc / l, zero where no key is visible (l == 0); stored where inside.
    const ValueId lt = b_.broadcast(res[1], 1, DV);
    const ValueId zero = zeros(R, DV);
    const ValueId out = b_.select(b_.cmp(Pred::Eq, lt, zero), zero, b_.binary(KOp::Div, res[2], lt));
    const ValueId ri = b_.binary(KOp::Add, tile(q0, R, DV), row_index(R, DV));
    const ValueId cj = b_.binary(KOp::Add, tile(c0, R, DV), col_index(R, DV));
    const ValueId in_r = b_.cmp(Pred::Lt, ri, tile(sq, R, DV));
    const ValueId mask = b_.select(in_r, b_.cmp(Pred::Lt, cj, tile(dv, R, DV)), in_r);
    const ValueId off = b_.binary(KOp::Add, tile(obase, R, DV),
                                  b_.binary(KOp::Add, b_.binary(KOp::Mul, ri, tile(dv, R, DV)), cj));
    if (writes_outputs_) {
      // The consumers on the tile in registers, written where attention's
      // result would have been (its flat offsets in the output).
      detail::RegionLowerer(r_, opt_, k_).epilogue(out, off, mask);
      return;
    }
    const Elem oe = k_.params.back().elem;
    b_.store(static_cast<int>(k_.params.size() - 1), off, oe == Elem::F32 ? out : b_.cast(out, oe), mask);
  }

  const Region& r_;
  const RegionLowering& opt_;
  Kernel& k_;
  KernelBuilder b_;
  const AttentionTiles t_;
  bool half_ = false;
  bool writes_outputs_ = false;  // attention_writes_outputs
  Elem in_elem_ = Elem::F32;
  std::vector<int> q_, kd_, vd_, out_;
};

}  // namespace

bool attention_on_tensor_cores(const Region& r) {
  return !r.ops.empty() && r.ops.front().op == OpId::Attention && half_inputs(r, r.ops.front());
}

bool attention_writes_outputs(const Region& r) {
  if (r.ops.empty() || r.ops.front().op != OpId::Attention || r.outputs.empty()) return false;
  for (size_t i = 1; i < r.ops.size(); ++i)
    if (!op_def(r.ops[i].op).fusion.elementwise()) return false;
  for (int v : r.outputs)
    if (!r.type(v).tensor || r.type(v).dims != r.ops.front().type.dims) return false;
  return true;
}

AttentionTiles attention_tiles(const Region& r, const RegionLowering& opt, int64_t rows) {
  AttentionTiles t;
  t.rows = rows;
  const RegionOp& o = r.ops.at(0);
  if (o.op != OpId::Attention) return t;
  const bool half = half_inputs(r, o);
  const int64_t whole = half ? kAttentionMaxWhole : kAttentionMaxWholeF32;
  const std::optional<int64_t> d = symbol_value(opt, r.type(o.args[0]).dims.back());
  const std::optional<int64_t> dv = symbol_value(opt, r.type(o.args[2]).dims.back());
  if (d && *d <= whole) t.head = std::max<int64_t>(16, round_up(*d, 16));
  if (dv && *dv <= whole) t.value = std::max<int64_t>(16, round_up(*dv, 16));
  if (!rows) t.rows = !half ? 16 : std::max(t.head, t.value) > 128 ? 16 : 32;
  return t;
}

Kernel lower_attention(const Region& r, const std::string& name, const RegionLowering& opt, const AttentionTiles& tiles) {
  for (int64_t n : {tiles.rows, tiles.keys, tiles.head, tiles.value})
    if (n < 16 || n % 16 != 0) throw std::invalid_argument("lower_attention: tiles are multiples of 16");
  if (r.types_only) throw std::invalid_argument("lower_attention: a region of types only has no kernel");
  Kernel k;
  k.name = name;
  AttentionLowering(r, opt, k, tiles).run();
  fold_masks(k);
  return k;
}

}  // namespace tessera::kir
