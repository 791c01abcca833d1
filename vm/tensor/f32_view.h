// Float tensors seen as contiguous f32 arrays, for kernels that compute in
// f32 (spec §7: half precision is computed in f32 and rounded once on store).
// An f32 tensor is used in place; f16/bf16 data is converted once per kernel
// call, with the dtype switch outside the element loop.
#pragma once

#include <optional>
#include <vector>

#include "vm/tensor/tensor.h"

namespace tessera {

// Read side: `t` must have a float dtype.
class F32Input {
 public:
  explicit F32Input(const TensorObj& t);
  const float* data() const { return data_; }

 private:
  const float* data_;
  std::vector<float> copy_;
};

// Write side: kernels write f32 into data(); finish() rounds into the tensor
// when its dtype is not f32. `t` must have a float dtype.
class F32Output {
 public:
  explicit F32Output(TensorObj& t);
  float* data() { return data_; }
  void finish();

 private:
  TensorObj& t_;
  float* data_;
  std::vector<float> buf_;
};

// A tensor or script-scalar operand of an f32 computation: a float tensor,
// or an int/float/bool scalar rounded to f32.
class F32Operand {
 public:
  explicit F32Operand(const Value& v);
  const float* data() const { return in_ ? in_->data() : &scalar_; }
  bool is_scalar() const { return !in_.has_value(); }

 private:
  std::optional<F32Input> in_;
  float scalar_ = 0;
};

// Converts n elements between a float dtype's storage and f32.
void to_f32(DType dt, const void* src, float* dst, int64_t n);
void from_f32(DType dt, const float* src, void* dst, int64_t n);

}  // namespace tessera
