// Attention as one kernel of the kernel IR (lower_region.h,
// lower_attention): a program per block of 64 query rows of one batch entry
// walks the keys in blocks of 64 with an online softmax, the tiles and
// steps of the interpreter's attention_block (vm/tensor/nn.cpp), each the
// same f32 operation on zero-padded tiles, so it computes the interpreter's
// bits:
//
//   S = Q Kᵀ (dot over the head dim in chunks of 64, the products added in
//   order of k), S * scale, masked to -inf past the keys (and above the
//   diagonal when causal); m_new = max(m, rowmax S); P = exp(S - m_new);
//   alpha = exp(m - m_new); l = l * alpha + rowsum P; acc = acc * alpha + P V;
//   at the end acc / l (0 where l is 0: no visible key).
//
// What a GPU thread block does with tensor cores is this kernel with other
// tile sizes; the CPU runs the interpreter's kernel for a fused attention's
// step (faster there: this kernel's row reductions and broadcasts of 2-D
// tiles are element loops in the CPU emitter), and the tests run this one
// against it.
#include <limits>
#include <stdexcept>

#include "codegen/kernel/lower_region.h"
#include "codegen/kernel/mask_fold.h"

namespace tessera::kir {

namespace {

constexpr int64_t kRows = 64;  // query rows per program, as the interpreter's
constexpr int64_t kKeys = 64;  // keys per block, and the head dim's chunk

class AttentionLowering {
 public:
  AttentionLowering(const Region& r, const RegionLowering& opt, Kernel& k, int64_t dv_tile)
      : r_(r), opt_(opt), k_(k), b_(k), dvt_(dv_tile) {}

  void run() {
    const RegionOp& o = r_.ops.at(0);
    if (o.op != OpId::Attention) throw std::invalid_argument("lower_attention: the region does not start with attention");
    declare_region_inputs(r_, opt_, k_);
    k_.params.push_back(Param{"out", param_elem(o.type), param_dims(o.type), true});
    q_ = r_.type(o.args[0]).dims;
    kd_ = r_.type(o.args[1]).dims;
    vd_ = r_.type(o.args[2]).dims;
    out_ = o.type.dims;
    Extent blocks;
    if (q_[q_.size() - 2] != kDimOne) blocks.dims.push_back(q_[q_.size() - 2]);
    blocks.div = kRows;
    Extent batch;
    for (size_t j = 0; j + 2 < out_.size(); ++j)
      if (out_[j] != kDimOne) batch.dims.push_back(out_[j]);
    k_.grid = {blocks, batch};
    body(o);
  }

 private:
  ValueId dim(int s) { return s == kDimOne ? b_.const_int(1) : b_.dim(s); }
  ValueId ci(int64_t v) { return b_.const_int(v); }
  ValueId tile(ValueId scalar, int64_t rows, int64_t cols) { return b_.splat(scalar, {rows, cols}); }

  // The element offset of this program's batch entry in a tensor of `dims`
  // (batch dims right-aligned to the output's, size-1 dims broadcast),
  // times its last two dims.
  ValueId batch_base(const std::vector<int>& dims, ValueId entry) {
    const size_t lead = out_.size() - dims.size();
    ValueId base = ci(0);
    ValueId stride = b_.binary(KOp::Mul, dim(dims[dims.size() - 2]), dim(dims.back()));
    for (size_t k = dims.size() - 2; k-- > 0;) {
      const size_t j = lead + k;  // the output's batch axis
      if (dims[k] != kDimOne) {
        ValueId idx = entry;
        for (size_t a = j + 1; a + 2 < out_.size(); ++a) idx = b_.binary(KOp::Div, idx, dim(out_[a]));
        idx = b_.binary(KOp::Rem, idx, dim(out_[j]));
        base = b_.binary(KOp::Add, base, b_.binary(KOp::Mul, idx, stride));
        stride = b_.binary(KOp::Mul, stride, dim(dims[k]));
      }
    }
    return base;
  }

  // [rows, cols] tiles of the row index i and the column index j.
  ValueId row_index(int64_t rows, int64_t cols) { return b_.broadcast(b_.range(rows), 1, cols); }
  ValueId col_index(int64_t rows, int64_t cols) { return b_.broadcast(b_.range(cols), 0, rows); }

  // Elements (r0 + i, c0 + j) of a row-major [nrows, ncols] matrix at `base`,
  // zero where r0 + i >= nrows or c0 + j >= ncols; transposed: element
  // (r0 + j, c0 + i) as (i, j).
  ValueId load_block(int param, ValueId base, ValueId r0, ValueId c0, ValueId nrows, ValueId ncols, int64_t rows,
                     int64_t cols, bool transposed) {
    ValueId ri = row_index(rows, cols), cj = col_index(rows, cols);
    if (transposed) std::swap(ri, cj);
    ValueId r = b_.binary(KOp::Add, tile(r0, rows, cols), ri);
    ValueId c = b_.binary(KOp::Add, tile(c0, rows, cols), cj);
    ValueId in_r = b_.cmp(Pred::Lt, r, tile(nrows, rows, cols));
    ValueId in_c = b_.cmp(Pred::Lt, c, tile(ncols, rows, cols));
    ValueId mask = b_.select(in_r, in_c, in_r);  // in_r and in_c
    ValueId off = b_.binary(KOp::Add, tile(base, rows, cols),
                            b_.binary(KOp::Add, b_.binary(KOp::Mul, r, tile(ncols, rows, cols)), c));
    const Elem e = k_.params[param].elem;
    ValueId zero = e == Elem::F32 ? b_.const_float(0.0) : b_.cast(b_.const_float(0.0), e);
    ValueId x = b_.load(param, off, mask, tile(zero, rows, cols));
    return e == Elem::F32 ? x : b_.cast(x, Elem::F32);
  }

  void body(const RegionOp& o) {
    const int q = r_.index_of(o.args[0]), kk = r_.index_of(o.args[1]), v = r_.index_of(o.args[2]);
    const ValueId entry = b_.named(b_.program_id(1), "entry");
    const ValueId q0 = b_.named(b_.binary(KOp::Mul, b_.program_id(0), ci(kRows)), "q0");
    const ValueId sq = dim(q_[q_.size() - 2]), d = dim(q_.back()), sk = dim(kd_[kd_.size() - 2]), dv = dim(vd_.back());
    const ValueId qbase = batch_base(q_, entry), kbase = batch_base(kd_, entry), vbase = batch_base(vd_, entry);
    const ValueId obase = batch_base(out_, entry);
    // The scale: given, or 1/sqrt(d) in double, rounded to f32.
    ValueId scale;
    if (o.attrs.scale) scale = b_.const_float(static_cast<double>(static_cast<float>(*o.attrs.scale)));
    else
      scale = b_.cast(b_.binary(KOp::Div, b_.const_float(1.0, Elem::F64), b_.unary(KOp::Sqrt, b_.cast(d, Elem::F64))),
                      Elem::F32);
    const double inf = std::numeric_limits<double>::infinity();
    const ValueId kend = o.attrs.causal ? b_.binary(KOp::Min, sk, b_.binary(KOp::Add, q0, ci(kRows))) : sk;
    const ValueId m0 = b_.splat(b_.const_float(-inf), {kRows});
    const ValueId l0 = b_.splat(b_.const_float(0.0), {kRows});
    const ValueId acc0 = tile(b_.const_float(0.0), kRows, dvt_);
    const std::vector<ValueId> it = b_.begin_for(ci(0), kend, ci(kKeys), {m0, l0, acc0});
    const ValueId k0 = it[0], m = it[1], l = it[2], acc = it[3];
    // S = Q Kᵀ over the head dim in chunks, then * scale, then the masks.
    const std::vector<ValueId> sd = b_.begin_for(ci(0), d, ci(kKeys), {tile(b_.const_float(0.0), kRows, kKeys)});
    const ValueId qc = load_block(q, qbase, q0, sd[0], sq, d, kRows, kKeys, false);
    const ValueId ktc = load_block(kk, kbase, k0, sd[0], sk, d, kKeys, kKeys, true);
    const ValueId s_raw = b_.end_for({b_.dot(qc, ktc, sd[1])})[0];
    ValueId s = b_.binary(KOp::Mul, s_raw, tile(scale, kRows, kKeys));
    const ValueId key = b_.binary(KOp::Add, tile(k0, kRows, kKeys), col_index(kRows, kKeys));
    const ValueId ninf = tile(b_.const_float(-inf), kRows, kKeys);
    s = b_.select(b_.cmp(Pred::Ge, key, tile(sk, kRows, kKeys)), ninf, s);
    if (o.attrs.causal) {
      const ValueId query = b_.binary(KOp::Add, tile(q0, kRows, kKeys), row_index(kRows, kKeys));
      s = b_.select(b_.cmp(Pred::Gt, key, query), ninf, s);
    }
    // The online softmax step.
    const ValueId m_new = b_.binary(KOp::Max, m, b_.reduce(ReduceKind::Max, s, 1));
    const ValueId p = b_.unary(KOp::Exp, b_.binary(KOp::Sub, s, b_.broadcast(m_new, 1, kKeys)));
    const ValueId alpha = b_.unary(KOp::Exp, b_.binary(KOp::Sub, m, m_new));
    const ValueId l_new = b_.binary(KOp::Add, b_.binary(KOp::Mul, l, alpha), b_.reduce(ReduceKind::Sum, p, 1));
    const ValueId scaled = b_.binary(KOp::Mul, acc, b_.broadcast(alpha, 1, dvt_));
    const ValueId vt = load_block(v, vbase, k0, ci(0), sk, dv, kKeys, dvt_, false);
    const std::vector<ValueId> res = b_.end_for({m_new, l_new, b_.dot(p, vt, scaled)});
    // acc / l, zero where no key is visible (l == 0); stored where inside.
    const ValueId lt = b_.broadcast(res[1], 1, dvt_);
    const ValueId zero = tile(b_.const_float(0.0), kRows, dvt_);
    const ValueId out = b_.select(b_.cmp(Pred::Eq, lt, zero), zero, b_.binary(KOp::Div, res[2], lt));
    const ValueId ri = b_.binary(KOp::Add, tile(q0, kRows, dvt_), row_index(kRows, dvt_));
    const ValueId cj = col_index(kRows, dvt_);
    const ValueId in_r = b_.cmp(Pred::Lt, ri, tile(sq, kRows, dvt_));
    const ValueId mask = b_.select(in_r, b_.cmp(Pred::Lt, cj, tile(dv, kRows, dvt_)), in_r);
    const ValueId off = b_.binary(KOp::Add, tile(obase, kRows, dvt_),
                                  b_.binary(KOp::Add, b_.binary(KOp::Mul, ri, tile(dv, kRows, dvt_)), cj));
    const Elem oe = k_.params.back().elem;
    b_.store(static_cast<int>(k_.params.size() - 1), off, oe == Elem::F32 ? out : b_.cast(out, oe), mask);
  }

  const Region& r_;
  const RegionLowering& opt_;
  Kernel& k_;
  KernelBuilder b_;
  const int64_t dvt_;
  std::vector<int> q_, kd_, vd_, out_;
};

}  // namespace

Kernel lower_attention(const Region& r, const std::string& name, const RegionLowering& opt, int64_t dv_tile) {
  if (dv_tile < 1 || dv_tile % 16 != 0) throw std::invalid_argument("lower_attention: the value tile is a multiple of 16");
  if (r.types_only) throw std::invalid_argument("lower_attention: a region of types only has no kernel");
  Kernel k;
  k.name = name;
  AttentionLowering(r, opt, k, dv_tile).run();
  fold_masks(k);
  return k;
}

}  // namespace tessera::kir
