#include "vm/graph/collective_elements.h"

#include <cstring>
#include <type_traits>

#include "vm/tensor/dtype.h"

namespace tessera::collective_elements {

namespace {

template <typename T> void divide_as(T* p, size_t n, int64_t w) {
  for (size_t i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      p[i] = p[i] / static_cast<T>(w);
    } else {
      T q = static_cast<T>(p[i] / w);
      if (p[i] % w != 0 && p[i] < 0) --q;
      p[i] = q;
    }
  }
}

}  // namespace

CommElem elem_of(DType dt) {
  switch (dt) {
    case DType::I32: return CommElem::I32;
    case DType::I64: return CommElem::I64;
    case DType::Bool: return CommElem::U8;
    default: return CommElem::F32;  // f32; f16 and bf16 widened
  }
}

size_t elem_bytes(CommElem e) { return e == CommElem::U8 ? 1 : e == CommElem::I64 ? 8 : 4; }

bool widened(DType dt) { return dt == DType::F16 || dt == DType::BF16; }

ReduceOp transport_op(DType dt, ReduceOp op) {
  if (op == ReduceOp::Avg) return ReduceOp::Sum;
  if (dt == DType::Bool) return op == ReduceOp::Sum || op == ReduceOp::Max ? ReduceOp::Max : ReduceOp::Min;
  return op;
}

void widen(const void* src, DType dt, size_t n, void* dst) {
  if (!widened(dt)) {
    std::memcpy(dst, src, n * dtype_size(dt));
    return;
  }
  const auto* h = static_cast<const uint16_t*>(src);
  auto* f = static_cast<float*>(dst);
  for (size_t i = 0; i < n; ++i) f[i] = dt == DType::F16 ? f16_to_f32(h[i]) : bf16_to_f32(h[i]);
}

void divide(void* p, CommElem e, size_t n, int w) {
  if (e == CommElem::F32) divide_as(static_cast<float*>(p), n, w);
  if (e == CommElem::I32) divide_as(static_cast<int32_t*>(p), n, w);
  if (e == CommElem::I64) divide_as(static_cast<int64_t*>(p), n, w);
}

void narrow(const void* src, DType dt, size_t n, void* dst) {
  if (!widened(dt)) {
    if (src != dst) std::memcpy(dst, src, n * dtype_size(dt));
    return;
  }
  const auto* f = static_cast<const float*>(src);
  auto* h = static_cast<uint16_t*>(dst);
  for (size_t i = 0; i < n; ++i) h[i] = dt == DType::F16 ? f32_to_f16(f[i]) : f32_to_bf16(f[i]);
}

}  // namespace tessera::collective_elements
