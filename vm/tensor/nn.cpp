// Neural-network kernels: softmax, layer_norm, rms_norm, attention.
// Float inputs are computed in f32 with the vectorized primitives of
// vector_math.h (row statistics accumulate f32 blocks in double); softmax
// subtracts the row max for stability. Attention runs blocks of query rows
// against blocks of keys with an online softmax (attention_block). Integer
// and bool inputs take the double reference loops.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "vm/core/error.h"
#include "vm/tensor/f32_view.h"
#include "vm/tensor/kernels.h"
#include "vm/tensor/parallel_rows.h"
#include "vm/tensor/vector_math.h"

namespace tessera {

namespace {

// dst[i] = op(dst[i], s) for a scalar s.
void apply_scalar(Binary op, float* dst, float s, int64_t n) {
  vmath::table().binary(op, dst, false, &s, true, dst, n);
}

// Softmax of one contiguous row of n >= 1 elements into dst.
void softmax_row(const float* x, float* dst, int64_t n) {
  const vmath::Table& vm = vmath::table();
  const float m = vm.max(x, n);
  const double s = vm.exp_shifted(x, m, dst, n);
  apply_scalar(Binary::Div, dst, static_cast<float>(s), n);
}

void softmax_f32(const TensorObj& in, int64_t outer, int64_t n, int64_t inner, TensorObj& out) {
  F32Input x(in);
  F32Output y(out);
  if (inner == 1) {  // contiguous rows, independent: on every core
    parallel_rows(outer, n, [&](int64_t lo, int64_t hi) {
      for (int64_t o = lo; o < hi; ++o) softmax_row(x.data() + o * n, y.data() + o * n, n);
    });
    y.finish();
    return;
  }
  std::vector<float> row(static_cast<size_t>(2 * n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t base = o * n * inner + j;
      if (inner == 1) {
        softmax_row(x.data() + base, y.data() + base, n);
        continue;
      }
      // A strided row: gather, compute, scatter.
      for (int64_t k = 0; k < n; ++k) row[k] = x.data()[base + k * inner];
      softmax_row(row.data(), row.data() + n, n);
      for (int64_t k = 0; k < n; ++k) y.data()[base + k * inner] = row[n + k];
    }
  y.finish();
}

}  // namespace

DType float_result_dtype(DType in) { return dtype_is_float(in) ? in : DType::F32; }

void softmax_kernel(const TensorObj& in, int axis, TensorObj& out) {
  if (in.rank() == 0) {  // softmax of a single value is 1 (NaN stays NaN)
    double v = in.get_f(0);
    out.set_f(0, std::isnan(v) ? v : 1.0);
    return;
  }
  int64_t outer = 1, n = in.shape[axis], inner = 1;
  for (int d = 0; d < axis; ++d) outer *= in.shape[d];
  for (size_t d = axis + 1; d < in.rank(); ++d) inner *= in.shape[d];
  if (n == 0) return;
  if (dtype_is_float(in.dtype)) return softmax_f32(in, outer, n, inner, out);
  std::vector<double> row(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t base = o * n * inner + j;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < n; ++k) {
        row[k] = in.get_f(base + k * inner);
        if (row[k] > mx || std::isnan(row[k])) mx = row[k];
      }
      // A row of all -inf would give (-inf) - (-inf) = NaN; NumPy does the same.
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += (row[k] = std::exp(row[k] - mx));
      for (int64_t k = 0; k < n; ++k) out.set_f(base + k * inner, row[k] / sum);
    }
}

void check_norm_param(const TensorObj& x, const TensorObj* p, const char* what, const char* name) {
  if (x.rank() == 0) throw RuntimeError(std::string(name) + ": expected a tensor of rank >= 1, got a 0-d tensor");
  if (!p) return;
  if (p->rank() != 1 || p->shape[0] != x.shape.back())
    throw RuntimeError(std::string(name) + ": " + what + " shape " + shape_str(p->shape) +
                       " does not match input shape " + shape_str(x.shape));
}

namespace {

// The f32 path of layer_norm (with_mean) and rms_norm: each row is scaled by
// 1/sqrt(statistic + eps), then multiplied by w and shifted by b when given.
void norm_f32(const TensorObj& x, const TensorObj* w, const TensorObj* b, double eps, bool with_mean,
              TensorObj& out) {
  const vmath::Table& vm = vmath::table();
  const int64_t d = x.shape.back();
  const int64_t rows = d ? x.numel / d : 0;
  F32Input in(x);
  F32Output res(out);
  std::optional<F32Input> wf, bf;
  if (w) wf.emplace(*w);
  if (b) bf.emplace(*b);
  const double dd = static_cast<double>(d);
  // Rows are independent: on every core.
  parallel_rows(rows, d, [&](int64_t lo, int64_t hi) {
  for (int64_t r = lo; r < hi; ++r) {
    const float* row = in.data() + r * d;
    float* dst = res.data() + r * d;
    if (with_mean) {
      const double mean = vm.sum(row, d) / dd;
      const double var = vm.sum_sq_dev(row, static_cast<float>(mean), d) / dd;  // biased, as PyTorch
      float m = static_cast<float>(mean);
      vm.binary(Binary::Sub, row, false, &m, true, dst, d);
      apply_scalar(Binary::Mul, dst, static_cast<float>(1.0 / std::sqrt(var + eps)), d);
    } else {
      const double ms = vm.sum_squares(row, d) / dd;
      float inv = static_cast<float>(1.0 / std::sqrt(ms + eps));
      vm.binary(Binary::Mul, row, false, &inv, true, dst, d);
    }
    if (wf) vm.binary(Binary::Mul, dst, false, wf->data(), false, dst, d);
    if (bf) vm.binary(Binary::Add, dst, false, bf->data(), false, dst, d);
  }
  });
  res.finish();
}

}  // namespace

void layer_norm_kernel(const TensorObj& x, const TensorObj* w, const TensorObj* b, double eps, TensorObj& out) {
  if (dtype_is_float(x.dtype) && (!w || dtype_is_float(w->dtype)) && (!b || dtype_is_float(b->dtype)))
    return norm_f32(x, w, b, eps, true, out);
  const int64_t d = x.shape.back();
  const int64_t rows = d ? x.numel / d : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * d;
    double mean = 0;
    for (int64_t i = 0; i < d; ++i) mean += x.get_f(base + i);
    mean /= static_cast<double>(d);
    double var = 0;
    for (int64_t i = 0; i < d; ++i) {
      double t = x.get_f(base + i) - mean;
      var += t * t;
    }
    var /= static_cast<double>(d);  // biased, as in PyTorch's layer_norm
    double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < d; ++i) {
      double y = (x.get_f(base + i) - mean) * inv;
      if (w) y *= w->get_f(i);
      if (b) y += b->get_f(i);
      out.set_f(base + i, y);
    }
  }
}

void rms_norm_kernel(const TensorObj& x, const TensorObj* w, double eps, TensorObj& out) {
  if (dtype_is_float(x.dtype) && (!w || dtype_is_float(w->dtype))) return norm_f32(x, w, nullptr, eps, false, out);
  const int64_t d = x.shape.back();
  const int64_t rows = d ? x.numel / d : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * d;
    double ss = 0;
    for (int64_t i = 0; i < d; ++i) {
      double v = x.get_f(base + i);
      ss += v * v;
    }
    double inv = 1.0 / std::sqrt(ss / static_cast<double>(d) + eps);
    for (int64_t i = 0; i < d; ++i) {
      double y = x.get_f(base + i) * inv;
      if (w) y *= w->get_f(i);
      out.set_f(base + i, y);
    }
  }
}

bool attention_groups_heads(int64_t hq, int64_t hkv) { return hkv > 1 && hq > hkv && hq % hkv == 0; }

namespace {
// batch: the batch entries in the result's order. With grouped-query
// attention q's head dim Hq is split into [Hkv, g] and k's and v's heads
// are [Hkv, 1], so that plain broadcasting sends query head h = kv * g + j
// to kv head h / g, and the entries keep the result's order; out_batch is
// then batch with [Hkv, g] joined back into Hq.
struct AttnDims {
  Shape batch, out_batch, qb, kb, vb;
  int64_t sq, sk, d, dv;
};

AttnDims attention_dims(const Shape& q, const Shape& k, const Shape& v, const char* name) {
  auto fail = [&](const Shape& x, const Shape& y) -> AttnDims {
    throw RuntimeError(std::string(name) + ": shapes " + shape_str(x) + " and " + shape_str(y) +
                       " are incompatible");
  };
  for (const Shape* s : {&q, &k, &v})
    if (s->size() < 2)
      throw RuntimeError(std::string(name) + ": expected tensors of rank >= 2, got shape " + shape_str(*s));
  AttnDims a;
  a.sq = q[q.size() - 2];
  a.d = q.back();
  a.sk = k[k.size() - 2];
  a.dv = v.back();
  if (k.back() != a.d) return fail(q, k);
  if (v[v.size() - 2] != a.sk) return fail(k, v);
  a.qb.assign(q.begin(), q.end() - 2);
  a.kb.assign(k.begin(), k.end() - 2);
  a.vb.assign(v.begin(), v.end() - 2);
  // Grouped-query attention: the head dims (each tensor's dim before its
  // last two, right-aligned as broadcasting aligns them) differ, k's and
  // v's are equal, and neither side is 1 (which plain broadcasting covers).
  bool grouped = false;
  if (a.qb.size() >= 1 && a.kb.size() >= 1 && a.vb.size() >= 1) {
    const int64_t hq = a.qb.back(), hkv = a.kb.back();
    if (hkv == a.vb.back() && hkv > 1 && hq > 1 && hq != hkv) {
      if (!attention_groups_heads(hq, hkv))
        throw RuntimeError(std::string(name) + ": q has " + std::to_string(hq) +
                           " heads, which is not a multiple of k's " + std::to_string(hkv));
      a.qb.back() = hkv;
      a.qb.push_back(hq / hkv);
      a.kb.push_back(1);
      a.vb.push_back(1);
      grouped = true;
    }
  }
  Shape bqk;
  try {
    bqk = broadcast_shapes(a.qb, a.kb, name);
  } catch (const RuntimeError&) {
    return fail(q, k);
  }
  try {
    a.batch = broadcast_shapes(bqk, a.vb, name);
  } catch (const RuntimeError&) {
    return fail(k, v);
  }
  a.out_batch = a.batch;
  if (grouped) {
    const int64_t g = a.out_batch.back();
    a.out_batch.pop_back();
    a.out_batch.back() *= g;
  }
  return a;
}
}  // namespace

Shape attention_shape(const Shape& q, const Shape& k, const Shape& v, const char* name) {
  AttnDims a = attention_dims(q, k, v, name);
  Shape out = a.out_batch;
  out.push_back(a.sq);
  out.push_back(a.dv);
  return out;
}

namespace {

// One batch entry of f32 attention, q [sq, d], k [sk, d], v [sk, dv] ->
// o [sq, dv], as tiles: blocks of kAttnRows query rows against blocks of
// kAttnKeys keys with an online softmax (a running max m and sum l per
// row, the output accumulator rescaled by exp(m_old - m_new) when the max
// grows), so no more than a block of scores is ever made. Tiles are zero-
// padded to whole blocks (d to a multiple of kAttnKeys), products are the
// vector-math `dot` (each product rounded, added in order of k), and every
// other step is one f32 operation: the kernel IR's attention kernel
// (codegen/kernel/lower_attention.cpp) does exactly these, so it computes
// these bits. A causal query i sees keys 0..i (top-left aligned); key blocks
// that no row of a query block sees are skipped; a row that sees no key
// (sk == 0) is zeros.
constexpr int64_t kAttnRows = 64;
constexpr int64_t kAttnKeys = 64;

int64_t round_up(int64_t n, int64_t b) { return (n + b - 1) / b * b; }

struct AttnScratch {
  std::vector<float> qt, ktt, vt, s, acc, m, l, mnew, rmax;
};

void attention_block(const AttnDims& a, const float* q, const float* k, const float* v, bool causal, float scale,
                     float* o, int64_t i0, AttnScratch& w) {
  const vmath::Table& vm = vmath::table();
  const int64_t R = kAttnRows, B = kAttnKeys, D = round_up(a.d, B), DV = round_up(std::max<int64_t>(a.dv, 1), 16);
  const int64_t rows = std::min(R, a.sq - i0);
  w.qt.assign(static_cast<size_t>(R * D), 0.0f);
  for (int64_t i = 0; i < rows; ++i) std::copy(q + (i0 + i) * a.d, q + (i0 + i + 1) * a.d, w.qt.begin() + i * D);
  w.acc.assign(static_cast<size_t>(R * DV), 0.0f);
  w.m.assign(static_cast<size_t>(R), -std::numeric_limits<float>::infinity());
  w.l.assign(static_cast<size_t>(R), 0.0f);
  w.mnew.resize(static_cast<size_t>(R));
  const int64_t kend = causal ? std::min(a.sk, i0 + R) : a.sk;
  for (int64_t k0 = 0; k0 < kend; k0 += B) {
    const int64_t keys = std::min(B, a.sk - k0);
    // K's block transposed ([D, B]) and V's block ([B, DV]), zero-padded.
    w.ktt.assign(static_cast<size_t>(D * B), 0.0f);
    for (int64_t j = 0; j < keys; ++j)
      for (int64_t c = 0; c < a.d; ++c) w.ktt[c * B + j] = k[(k0 + j) * a.d + c];
    w.vt.assign(static_cast<size_t>(B * DV), 0.0f);
    for (int64_t j = 0; j < keys; ++j) std::copy(v + (k0 + j) * a.dv, v + (k0 + j + 1) * a.dv, w.vt.begin() + j * DV);
    // Scores: q k^T, then the scale, then the masks (past the keys, causal),
    // where some key of the block is masked for some row.
    w.s.assign(static_cast<size_t>(R * B), 0.0f);
    vm.dot(R, B, D, w.qt.data(), w.ktt.data(), w.s.data());
    apply_scalar(Binary::Mul, w.s.data(), scale, R * B);
    const float ninf = -std::numeric_limits<float>::infinity();
    if (k0 + B > a.sk || (causal && k0 + B - 1 > i0))
      for (int64_t i = 0; i < R; ++i)
        for (int64_t j = 0; j < B; ++j)
          if (k0 + j >= a.sk || (causal && k0 + j > i0 + i)) w.s[i * B + j] = ninf;
    // m_new = max(m, each row's max) (NaN propagates; ties keep m).
    w.rmax.resize(static_cast<size_t>(R));
    for (int64_t i = 0; i < R; ++i) w.rmax[i] = vm.max(w.s.data() + i * B, B);
    vm.binary(Binary::Max, w.m.data(), false, w.rmax.data(), false, w.mnew.data(), R);
    // p = exp(s - m_new); alpha = exp(m - m_new); each an f32 operation.
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < B; ++j) w.s[i * B + j] = w.s[i * B + j] - w.mnew[i];
    vm.unary(Unary::Exp, w.s.data(), w.s.data(), R * B);
    for (int64_t i = 0; i < R; ++i) w.m[i] = w.m[i] - w.mnew[i];
    vm.unary(Unary::Exp, w.m.data(), w.m.data(), R);  // alpha, in m's place
    // l = l * alpha + the row's sum of p (the vector-math order, rounded to
    // f32); acc = acc * alpha + p v.
    for (int64_t i = 0; i < R; ++i) {
      const float alpha = w.m[i];
      w.l[i] = w.l[i] * alpha + static_cast<float>(vm.sum(w.s.data() + i * B, B));
      for (int64_t j = 0; j < DV; ++j) w.acc[i * DV + j] = w.acc[i * DV + j] * alpha;
    }
    vm.dot(R, DV, B, w.s.data(), w.vt.data(), w.acc.data());
    w.m.swap(w.mnew);
  }
  for (int64_t i = 0; i < rows; ++i) {
    float* orow = o + (i0 + i) * a.dv;
    if (w.l[i] == 0.0f) {  // no visible key: zeros rather than 0/0
      std::fill(orow, orow + a.dv, 0.0f);
      continue;
    }
    vm.binary(Binary::Div, w.acc.data() + i * DV, false, &w.l[i], true, orow, a.dv);
  }
}

}  // namespace

void attention_kernel(const TensorObj& q, const TensorObj& k, const TensorObj& v, bool causal,
                      std::optional<double> scale_opt, TensorObj& out) {
  AttnDims a = attention_dims(q.shape, k.shape, v.shape, "attention");
  const double scale = scale_opt ? *scale_opt : 1.0 / std::sqrt(static_cast<double>(a.d));
  if (out.numel == 0) return;
  if (dtype_is_float(q.dtype) && dtype_is_float(k.dtype) && dtype_is_float(v.dtype)) {
    F32Input qf(q), kf(k), vf(v);
    F32Output of(out);
    Shape qs = broadcast_strides(a.qb, a.batch), ks = broadcast_strides(a.kb, a.batch),
          vs = broadcast_strides(a.vb, a.batch);
    std::array<const Shape*, 3> st{&qs, &ks, &vs};
    // Each batch entry's q, k, v offsets; then its query blocks, independent, on every core.
    std::vector<std::array<int64_t, 3>> entries;
    for_each_broadcast<3>(a.batch, st, [&](int64_t, int64_t oq, int64_t ok, int64_t ov) {
      entries.push_back({oq, ok, ov});
    });
    const int64_t blocks = (a.sq + kAttnRows - 1) / kAttnRows;
    const int64_t work = kAttnRows * std::max<int64_t>(a.sk, 1) * std::max<int64_t>(a.d + a.dv, 1);
    parallel_rows(static_cast<int64_t>(entries.size()) * blocks, work, [&](int64_t lo, int64_t hi) {
      AttnScratch w;
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t bi = t / blocks;
        const auto [oq, ok, ov] = entries[static_cast<size_t>(bi)];
        attention_block(a, qf.data() + oq * a.sq * a.d, kf.data() + ok * a.sk * a.d, vf.data() + ov * a.sk * a.dv,
                        causal, static_cast<float>(scale), of.data() + bi * a.sq * a.dv, (t % blocks) * kAttnRows, w);
      }
    });
    of.finish();
    return;
  }
  Shape qs = broadcast_strides(a.qb, a.batch), ks = broadcast_strides(a.kb, a.batch),
        vs = broadcast_strides(a.vb, a.batch);
  std::array<const Shape*, 3> st{&qs, &ks, &vs};
  std::vector<double> p(static_cast<size_t>(a.sk)), acc(static_cast<size_t>(a.dv));
  for_each_broadcast<3>(a.batch, st, [&](int64_t bi, int64_t oq, int64_t ok, int64_t ov) {
    const int64_t qbase = oq * a.sq * a.d, kbase = ok * a.sk * a.d, vbase = ov * a.sk * a.dv;
    const int64_t obase = bi * a.sq * a.dv;
    for (int64_t i = 0; i < a.sq; ++i) {
      // Top-left aligned causal mask: query i sees keys 0..i.
      const int64_t nk = causal ? std::min(a.sk, i + 1) : a.sk;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < nk; ++j) {
        double s = 0;
        for (int64_t c = 0; c < a.d; ++c) s += q.get_f(qbase + i * a.d + c) * k.get_f(kbase + j * a.d + c);
        p[j] = s * scale;
        if (p[j] > mx || std::isnan(p[j])) mx = p[j];
      }
      double sum = 0;
      for (int64_t j = 0; j < nk; ++j) sum += (p[j] = std::exp(p[j] - mx));
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j < nk; ++j)
        for (int64_t c = 0; c < a.dv; ++c) acc[c] += p[j] * v.get_f(vbase + j * a.dv + c);
      // No visible key (Sk == 0): the output row is zeros rather than 0/0.
      for (int64_t c = 0; c < a.dv; ++c) out.set_f(obase + i * a.dv + c, nk ? acc[c] / sum : 0.0);
    }
  });
}

}  // namespace tessera
