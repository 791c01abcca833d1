// Tensors for tests: an f32 tensor filled by a function of the element's
// index, and a tensor's elements as bytes (outputs compared exactly).
#pragma once

#include <cstdint>
#include <vector>

#include "vm/tensor/tensor.h"

namespace tessera::testing {

template <class F>
Value f32_tensor(Shape shape, F element) {
  Value v = make_tensor(DType::F32, std::move(shape));
  TensorObj& t = *v.as_tensor();
  for (int64_t i = 0; i < t.numel; ++i) t.set_f(i, element(i));
  return v;
}

inline std::vector<uint8_t> tensor_bytes(const Value& v) {
  const TensorObj& t = *v.as_tensor();
  const auto* p = static_cast<const uint8_t*>(t.data());
  return std::vector<uint8_t>(p, p + t.nbytes());
}

}  // namespace tessera::testing
