// Reductions over one axis or over everything. The input is viewed as
// [outer, n, inner] with n the reduced extent. Float inputs are reduced in
// f32 by the vectorized primitives (vector_math.h): along contiguous rows
// when inner == 1, else a whole row of `inner` accumulators at a time; sums
// add f32 blocks in double. Integer sums accumulate in int64 (wrapping).
#include <algorithm>
#include <cmath>
#include <vector>

#include "vm/core/error.h"
#include "vm/tensor/f32_view.h"
#include "vm/tensor/kernels.h"
#include "vm/tensor/vector_math.h"

namespace tessera {

namespace {

void reduce_f32(Reduce op, const TensorObj& in, int64_t outer, int64_t n, int64_t inner, TensorObj& out) {
  const vmath::Table& vm = vmath::table();
  F32Input x(in);
  const float* p = x.data();
  if (op == Reduce::ArgMax) {
    int64_t* po = out.ptr<int64_t>();
    std::vector<float> best(static_cast<size_t>(inner));
    for (int64_t o = 0; o < outer; ++o) {
      const float* block = p + o * n * inner;
      int64_t* dst = po + o * inner;
      if (inner == 1) {
        *dst = vm.argmax(block, n);
        continue;
      }
      // Column-wise: the first maximum, or the first NaN, wins.
      for (int64_t j = 0; j < inner; ++j) best[j] = block[j], dst[j] = 0;
      for (int64_t k = 1; k < n; ++k)
        for (int64_t j = 0; j < inner; ++j) {
          const float v = block[k * inner + j];
          if (best[j] == best[j] && (v != v || v > best[j])) best[j] = v, dst[j] = k;
        }
    }
    return;
  }
  F32Output res(out);
  float* po = res.data();
  const bool is_sum = op == Reduce::Sum || op == Reduce::Mean;
  std::vector<double> acc(is_sum && inner > 1 ? static_cast<size_t>(inner) : 0);
  for (int64_t o = 0; o < outer; ++o) {
    const float* block = p + o * n * inner;
    float* dst = po + o * inner;
    if (is_sum) {
      const double div = op == Reduce::Mean ? static_cast<double>(n) : 1.0;
      if (inner == 1) {
        *dst = static_cast<float>(vm.sum(block, n) / div);
        continue;
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t k = 0; k < n; ++k) vm.accumulate(acc.data(), block + k * inner, inner);
      for (int64_t j = 0; j < inner; ++j) dst[j] = static_cast<float>(acc[j] / div);
    } else if (inner == 1) {
      *dst = op == Reduce::Max ? vm.max(block, n) : vm.min(block, n);
    } else {
      std::copy(block, block + inner, dst);
      for (int64_t k = 1; k < n; ++k) (op == Reduce::Max ? vm.max_into : vm.min_into)(dst, block + k * inner, inner);
    }
  }
  res.finish();
}

}  // namespace

int normalize_axis(int64_t axis, size_t rank, const char* name) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    throw RuntimeError(std::string(name) + ": axis " + std::to_string(axis) +
                       " is out of range for a tensor of rank " + std::to_string(rank));
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

Shape reduce_shape(const Shape& in, std::optional<int> axis, bool keepdim) {
  if (!axis) return keepdim ? Shape(in.size(), 1) : Shape{};
  Shape out = in;
  if (keepdim) out[*axis] = 1;
  else out.erase(out.begin() + *axis);
  return out;
}

DType reduce_dtype(Reduce op, DType in) {
  switch (op) {
    case Reduce::Sum: return dtype_is_float(in) ? in : DType::I64;
    case Reduce::Mean: return dtype_is_float(in) ? in : DType::F32;
    case Reduce::ArgMax: return DType::I64;
    case Reduce::Max:
    case Reduce::Min: return in;
  }
  return in;
}

void reduce_kernel(Reduce op, const TensorObj& in, std::optional<int> axis, TensorObj& out,
                   const char* name) {
  int64_t outer = 1, n = in.numel, inner = 1;
  if (axis) {
    n = in.shape[*axis];
    for (int d = 0; d < *axis; ++d) outer *= in.shape[d];
    for (size_t d = *axis + 1; d < in.rank(); ++d) inner *= in.shape[d];
  }
  if (n == 0 && (op == Reduce::Max || op == Reduce::Min || op == Reduce::ArgMax) && out.numel > 0)
    throw RuntimeError(std::string(name) + ": empty tensor");
  const bool fl = dtype_is_float(in.dtype);
  if (fl) return reduce_f32(op, in, outer, n, inner, out);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t base = o * n * inner + j;
      const int64_t dst = o * inner + j;
      switch (op) {
        case Reduce::Sum:
        case Reduce::Mean: {
          if (fl || op == Reduce::Mean) {
            double acc = 0;
            for (int64_t k = 0; k < n; ++k) acc += in.get_f(base + k * inner);
            out.set_f(dst, op == Reduce::Mean ? acc / static_cast<double>(n) : acc);
          } else {
            uint64_t acc = 0;
            for (int64_t k = 0; k < n; ++k) acc += static_cast<uint64_t>(in.get_i(base + k * inner));
            out.set_i(dst, static_cast<int64_t>(acc));
          }
          break;
        }
        case Reduce::Max:
        case Reduce::Min: {
          const bool mx = op == Reduce::Max;
          if (fl) {
            double best = in.get_f(base);
            for (int64_t k = 1; k < n && !std::isnan(best); ++k) {
              double v = in.get_f(base + k * inner);
              if (std::isnan(v) || (mx ? v > best : v < best)) best = v;  // NaN propagates
            }
            out.set_f(dst, best);
          } else {
            int64_t best = in.get_i(base);
            for (int64_t k = 1; k < n; ++k) {
              int64_t v = in.get_i(base + k * inner);
              if (mx ? v > best : v < best) best = v;
            }
            out.set_i(dst, best);
          }
          break;
        }
        case Reduce::ArgMax: {
          int64_t best_k = 0;
          if (fl) {
            double best = in.get_f(base);
            for (int64_t k = 1; k < n && !std::isnan(best); ++k) {
              double v = in.get_f(base + k * inner);
              if (std::isnan(v) || v > best) best = v, best_k = k;  // first NaN wins, as NumPy
            }
          } else {
            int64_t best = in.get_i(base);
            for (int64_t k = 1; k < n; ++k) {
              int64_t v = in.get_i(base + k * inner);
              if (v > best) best = v, best_k = k;
            }
          }
          out.set_i(dst, best_k);
          break;
        }
      }
    }
  }
}

}  // namespace tessera
