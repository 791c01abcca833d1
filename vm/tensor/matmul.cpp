// Matrix multiplication with NumPy semantics: 1-D operands are promoted to a
// row (left) or column (right) and the added dim is squeezed from the
// result; leading batch dims broadcast. Float results go through OpenBLAS
// sgemm, loaded at the first such product (blas_library.h); half and mixed
// inputs are widened to f32 first, so the accumulation is f32 and the result
// is rounded once. Integer/bool results use an int64 triple loop with
// wrap-around.
#include <cblas.h>

#include <cstring>

#include "vm/core/error.h"
#include "vm/tensor/blas_library.h"
#include "vm/tensor/f32_view.h"
#include "vm/tensor/kernels.h"

namespace tessera {

namespace {

struct MatmulDims {
  Shape batch;           // broadcast batch shape
  Shape a_batch, b_batch;  // each operand's own batch dims
  int64_t m, k, n;
  bool a_vec, b_vec;
};

MatmulDims matmul_dims(const Shape& a, const Shape& b, const char* name) {
  auto fail = [&]() -> MatmulDims {
    throw RuntimeError(std::string(name) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                       " are incompatible");
  };
  if (a.empty() || b.empty()) return fail();
  MatmulDims d;
  d.a_vec = a.size() == 1;
  d.b_vec = b.size() == 1;
  d.m = d.a_vec ? 1 : a[a.size() - 2];
  d.k = a.back();
  int64_t kb = d.b_vec ? b[0] : b[b.size() - 2];
  d.n = d.b_vec ? 1 : b.back();
  if (d.k != kb) return fail();
  if (d.m > INT32_MAX || d.n > INT32_MAX || d.k > INT32_MAX)  // BLAS takes int dims
    throw RuntimeError(std::string(name) + ": dimensions too large");
  d.a_batch = d.a_vec ? Shape{} : Shape(a.begin(), a.end() - 2);
  d.b_batch = d.b_vec ? Shape{} : Shape(b.begin(), b.end() - 2);
  size_t rank = std::max(d.a_batch.size(), d.b_batch.size());
  d.batch.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - d.a_batch.size() ? 1 : d.a_batch[i - (rank - d.a_batch.size())];
    int64_t y = i < rank - d.b_batch.size() ? 1 : d.b_batch[i - (rank - d.b_batch.size())];
    if (x != y && x != 1 && y != 1) return fail();
    d.batch[i] = x == 1 ? y : x;
  }
  return d;
}

// The whole tensor as f32 (a copy unless it already is f32).
const float* as_f32(const TensorObj& t, std::vector<float>& scratch) {
  if (t.dtype == DType::F32) return t.ptr<float>();
  scratch.resize(static_cast<size_t>(t.numel));
  if (dtype_is_float(t.dtype)) to_f32(t.dtype, t.data(), scratch.data(), t.numel);
  else
    for (int64_t i = 0; i < t.numel; ++i) scratch[i] = static_cast<float>(t.get_f(i));
  return scratch.data();
}

}  // namespace

Shape matmul_shape(const Shape& a, const Shape& b, const char* name) {
  MatmulDims d = matmul_dims(a, b, name);
  Shape out = d.batch;
  if (!d.a_vec) out.push_back(d.m);
  if (!d.b_vec) out.push_back(d.n);
  shape_numel(out, DType::F32);
  return out;
}

void matmul_kernel(const TensorObj& a, const TensorObj& b, TensorObj& out) {
  MatmulDims d = matmul_dims(a.shape, b.shape, "matmul");
  const int64_t m = d.m, k = d.k, n = d.n;
  if (out.numel == 0) return;
  // Batch strides in units of whole matrices.
  Shape a_bs = broadcast_strides(d.a_batch, d.batch);
  Shape b_bs = broadcast_strides(d.b_batch, d.batch);
  std::array<const Shape*, 2> st{&a_bs, &b_bs};
  if (dtype_is_float(out.dtype)) {
    std::vector<float> sa, sb, sc;
    const float* pa = as_f32(a, sa);
    const float* pb = as_f32(b, sb);
    float* pc = out.dtype == DType::F32 ? out.ptr<float>()
                                        : (sc.resize(static_cast<size_t>(out.numel)), sc.data());
    const BlasSgemm sgemm = k == 0 ? nullptr : blas_sgemm();
    for_each_broadcast<2>(d.batch, st, [&](int64_t bi, int64_t oa, int64_t ob) {
      float* c = pc + bi * m * n;
      if (k == 0) {
        std::memset(c, 0, sizeof(float) * static_cast<size_t>(m * n));
        return;
      }
      sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                  static_cast<int>(k), 1.0f, pa + oa * m * k, static_cast<int>(k), pb + ob * k * n,
                  static_cast<int>(n), 0.0f, c, static_cast<int>(n));
    });
    if (out.dtype != DType::F32) from_f32(out.dtype, pc, out.data(), out.numel);
    return;
  }
  for_each_broadcast<2>(d.batch, st, [&](int64_t bi, int64_t oa, int64_t ob) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        uint64_t acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += static_cast<uint64_t>(a.get_i(oa * m * k + i * k + p)) *
                 static_cast<uint64_t>(b.get_i(ob * k * n + p * n + j));
        out.set_i(bi * m * n + i * n + j, static_cast<int64_t>(acc));
      }
  });
}

}  // namespace tessera
