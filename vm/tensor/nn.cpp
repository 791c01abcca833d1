// Neural-network kernels: softmax, layer_norm, rms_norm, attention.
// All accumulate in double (at least the f32 accumulation §7 asks for) and
// round once on store; softmax subtracts the row max for stability.
#include <cmath>
#include <limits>
#include <vector>

#include "vm/core/error.h"
#include "vm/tensor/kernels.h"

namespace tessera {

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

void layer_norm_kernel(const TensorObj& x, const TensorObj* w, const TensorObj* b, double eps, TensorObj& out) {
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

namespace {
struct AttnDims {
  Shape batch, qb, kb, vb;
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
  return a;
}
}  // namespace

Shape attention_shape(const Shape& q, const Shape& k, const Shape& v, const char* name) {
  AttnDims a = attention_dims(q, k, v, name);
  Shape out = a.batch;
  out.push_back(a.sq);
  out.push_back(a.dv);
  return out;
}

void attention_kernel(const TensorObj& q, const TensorObj& k, const TensorObj& v, bool causal,
                      std::optional<double> scale_opt, TensorObj& out) {
  AttnDims a = attention_dims(q.shape, k.shape, v.shape, "attention");
  const double scale = scale_opt ? *scale_opt : 1.0 / std::sqrt(static_cast<double>(a.d));
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
