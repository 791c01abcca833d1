#include "vm/tensor/f32_view.h"

#include <cstring>

namespace tessera {

void to_f32(DType dt, const void* src, float* dst, int64_t n) {
  const auto* h = static_cast<const uint16_t*>(src);
  switch (dt) {
    case DType::F32: if (n) std::memcpy(dst, src, sizeof(float) * static_cast<size_t>(n)); return;
    case DType::F16: for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(h[i]); return;
    case DType::BF16: for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(h[i]); return;
    default: return;  // callers pass float dtypes only
  }
}

void from_f32(DType dt, const float* src, void* dst, int64_t n) {
  auto* h = static_cast<uint16_t*>(dst);
  switch (dt) {
    case DType::F32: if (n) std::memcpy(dst, src, sizeof(float) * static_cast<size_t>(n)); return;
    case DType::F16: for (int64_t i = 0; i < n; ++i) h[i] = f32_to_f16(src[i]); return;
    case DType::BF16: for (int64_t i = 0; i < n; ++i) h[i] = f32_to_bf16(src[i]); return;
    default: return;
  }
}

F32Input::F32Input(const TensorObj& t) {
  if (t.dtype == DType::F32) {
    data_ = t.ptr<float>();
    return;
  }
  copy_.resize(static_cast<size_t>(t.numel));
  to_f32(t.dtype, t.data(), copy_.data(), t.numel);
  data_ = copy_.data();
}

F32Output::F32Output(TensorObj& t) : t_(t) {
  if (t.dtype == DType::F32) {
    data_ = t.ptr<float>();
    return;
  }
  buf_.resize(static_cast<size_t>(t.numel));
  data_ = buf_.data();
}

void F32Output::finish() {
  if (t_.dtype != DType::F32) from_f32(t_.dtype, buf_.data(), t_.data(), t_.numel);
}

F32Operand::F32Operand(const Value& v) {
  if (v.is_tensor()) in_.emplace(*v.as_tensor());
  else if (v.is_float()) scalar_ = static_cast<float>(v.as_float());
  else if (v.is_int()) scalar_ = static_cast<float>(v.as_int());
  else scalar_ = v.as_bool() ? 1.0f : 0.0f;
}

}  // namespace tessera
