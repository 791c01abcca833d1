// The printed form of a tensor (spec §6): header, one space, nested values,
// each element with C's %g (bools true/false), long dims elided to the first
// and last three elements at every level.
#include <cmath>
#include <cstdio>

#include "vm/tensor/tensor.h"
#include "vm/tensor/tensor_api.h"

namespace tessera {

namespace {

constexpr int64_t kEdgeItems = 3;  // shown at each end of an elided dim
constexpr int64_t kMaxShown = 6;   // dims longer than this are elided

void format_element(std::string& out, const TensorObj& t, int64_t i) {
  if (t.dtype == DType::Bool) {
    out += t.ptr<uint8_t>()[i] ? "true" : "false";
    return;
  }
  double v = dtype_is_float(t.dtype) ? t.get_f(i) : static_cast<double>(t.get_i(i));
  if (std::isnan(v)) {  // glibc prints "-nan" for negative NaNs; keep one spelling
    out += "nan";
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  out += buf;
}

void format_dim(std::string& out, const TensorObj& t, const Shape& strides, size_t d, int64_t offset) {
  if (d == t.rank()) {
    format_element(out, t, offset);
    return;
  }
  const int64_t n = t.shape[d];
  out += '[';
  bool first = true;
  auto emit = [&](int64_t k) {
    if (!first) out += ", ";
    first = false;
    format_dim(out, t, strides, d + 1, offset + k * strides[d]);
  };
  if (n > kMaxShown) {
    for (int64_t k = 0; k < kEdgeItems; ++k) emit(k);
    out += ", ...";
    for (int64_t k = n - kEdgeItems; k < n; ++k) emit(k);
  } else {
    for (int64_t k = 0; k < n; ++k) emit(k);
  }
  out += ']';
}

}  // namespace

void format_tensor(std::string& out, const Value& v) {
  const TensorObj& t = *v.as_tensor();
  out += "tensor(shape=";
  out += shape_str(t.shape);
  out += ", dtype=";
  out += dtype_name(t.dtype);
  out += ") ";
  format_dim(out, t, contiguous_strides(t.shape), 0, 0);
}

}  // namespace tessera
