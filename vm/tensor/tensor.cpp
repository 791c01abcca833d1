#include "vm/tensor/tensor.h"

#include <cmath>
#include <cstring>
#include <new>

#include "vm/core/error.h"
#include "vm/tensor/buffer_pool.h"

namespace tessera {

int64_t shape_numel(const Shape& s, DType dt) {
  uint64_t n = 1;
  const uint64_t limit = kMaxTensorBytes / dtype_size(dt);
  for (int64_t d : s) {
    if (d < 0) throw RuntimeError("negative dimension in shape " + shape_str(s));
    if (d == 0) {
      n = 0;
      continue;
    }
    // Checked before multiplying so that the product itself cannot overflow.
    if (n != 0 && static_cast<uint64_t>(d) > limit / n) throw RuntimeError("tensor too large");
    if (n != 0) n *= static_cast<uint64_t>(d);
  }
  // A zero dimension makes the tensor empty, but the other dims must still be sane.
  for (int64_t d : s)
    if (static_cast<uint64_t>(d) > limit) throw RuntimeError("tensor too large");
  return static_cast<int64_t>(n);
}

TensorObj::TensorObj(DType dt, Shape s) : Obj(ObjKind::Tensor), dtype(dt), shape(std::move(s)) {
  if (shape.size() > kMaxRank)
    throw RuntimeError("tensor rank must be at most 8, got " + std::to_string(shape.size()));
  numel = shape_numel(shape, dtype);
  try {
    data_ = tensor_buffer_alloc(buffer_bytes());
  } catch (const std::bad_alloc&) {
    throw RuntimeError("out of memory");
  }
}

TensorObj::TensorObj(DType dt, Shape s, void* data, std::unique_ptr<ExternalStorage> owner)
    : Obj(ObjKind::Tensor), dtype(dt), shape(std::move(s)), data_(data), external_(std::move(owner)) {
  if (shape.size() > kMaxRank)
    throw RuntimeError("tensor rank must be at most 8, got " + std::to_string(shape.size()));
  numel = shape_numel(shape, dtype);
}

// Whole 64-byte lines, and a valid pointer even for empty tensors.
size_t TensorObj::buffer_bytes() const {
  const size_t bytes = (nbytes() + 63) & ~size_t{63};
  return bytes == 0 ? 64 : bytes;
}

TensorObj::~TensorObj() {
  delete device_copy;
  if (external_) external_.reset();  // gives the memory back to its owner
  else tensor_buffer_free(data_, buffer_bytes());
}

void TensorObj::attach_device_copy(std::unique_ptr<DeviceCopy> copy) {
  delete device_copy;
  device_copy = copy.release();
}

void TensorObj::fetch() const {
  // Dropped even when the copy fails: a device that cannot copy back will
  // not do better on the next access, and the error says what happened.
  std::unique_ptr<DeviceCopy> copy(device_copy);
  device_copy = nullptr;
  copy->to_host(data_, nbytes());
}

Value make_tensor(DType dt, Shape shape, bool zero) {
  auto* t = new TensorObj(dt, std::move(shape));
  Value v = Value::adopt(t);
  tensor_work += static_cast<uint64_t>(t->numel);
  if (zero && t->numel) std::memset(t->host_buffer(), 0, t->nbytes());
  return v;
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

Shape contiguous_strides(const Shape& s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

double TensorObj::get_f(int64_t i) const {
  switch (dtype) {
    case DType::F32: return ptr<float>()[i];
    case DType::F16: return f16_to_f32(ptr<uint16_t>()[i]);
    case DType::BF16: return bf16_to_f32(ptr<uint16_t>()[i]);
    case DType::I32: return ptr<int32_t>()[i];
    case DType::I64: return static_cast<double>(ptr<int64_t>()[i]);
    case DType::Bool: return ptr<uint8_t>()[i] ? 1.0 : 0.0;
  }
  return 0;
}

namespace {
// Float -> int64 conversion that never hits UB: NaN -> 0, saturating at the
// int64 range, truncating toward zero otherwise (like a C cast where defined).
int64_t saturating_i64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(v);
}
// The same at the int32 range (LLVM's fptosi.sat and CUDA's conversions
// saturate at the target type, so the interpreter does too).
int32_t saturating_i32(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 2147483647.0) return INT32_MAX;
  if (v <= -2147483648.0) return INT32_MIN;
  return static_cast<int32_t>(v);
}
}  // namespace

int64_t TensorObj::get_i(int64_t i) const {
  switch (dtype) {
    case DType::I32: return ptr<int32_t>()[i];
    case DType::I64: return ptr<int64_t>()[i];
    case DType::Bool: return ptr<uint8_t>()[i];
    default: return saturating_i64(get_f(i));
  }
}

void TensorObj::set_f(int64_t i, double v) {
  switch (dtype) {
    case DType::F32: ptr<float>()[i] = static_cast<float>(v); break;
    case DType::F16: ptr<uint16_t>()[i] = f32_to_f16(static_cast<float>(v)); break;
    case DType::BF16: ptr<uint16_t>()[i] = f32_to_bf16(static_cast<float>(v)); break;
    case DType::I32: ptr<int32_t>()[i] = saturating_i32(v); break;
    case DType::I64: ptr<int64_t>()[i] = saturating_i64(v); break;
    case DType::Bool: ptr<uint8_t>()[i] = v != 0.0; break;
  }
}

void TensorObj::set_i(int64_t i, int64_t v) {
  switch (dtype) {
    case DType::I32: ptr<int32_t>()[i] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); break;
    case DType::I64: ptr<int64_t>()[i] = v; break;
    case DType::Bool: ptr<uint8_t>()[i] = v != 0; break;
    default: set_f(i, static_cast<double>(v)); break;
  }
}

Value tensor_element_value(const TensorObj& t, int64_t i) {
  if (dtype_is_float(t.dtype)) return Value::number(t.get_f(i));
  if (t.dtype == DType::Bool) return Value::boolean(t.ptr<uint8_t>()[i] != 0);
  return Value::integer(t.get_i(i));
}

}  // namespace tessera
