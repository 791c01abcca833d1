// Shape operations. All of them return new tensors (copies), per §7.
#include <cstring>

#include "vm/core/error.h"
#include "vm/tensor/kernels.h"

namespace tessera {

namespace {
[[noreturn]] void bad_shape(const char* name) {
  throw RuntimeError(std::string(name) + ": shape must be a list of non-negative ints");
}
void check_rank(size_t rank, const char* name) {
  if (rank > kMaxRank)
    throw RuntimeError(std::string(name) + ": rank must be at most 8, got " + std::to_string(rank));
}
}  // namespace

Shape parse_shape(const Value& v, const char* name) {
  if (!v.is_list()) bad_shape(name);
  const auto& items = v.as_list()->items;
  check_rank(items.size(), name);
  Shape s;
  for (const Value& x : items) {
    if (!x.is_int() || x.as_int() < 0) bad_shape(name);
    s.push_back(x.as_int());
  }
  shape_numel(s, DType::Bool);  // early "tensor too large" for absurd dims
  return s;
}

Shape reshape_shape(const TensorObj& t, const Value& v, const char* name) {
  if (!v.is_list()) throw RuntimeError(std::string(name) + ": shape must be a list of ints");
  const auto& items = v.as_list()->items;
  check_rank(items.size(), name);
  Shape s;
  int infer = -1;
  uint64_t known = 1;
  bool overflow = false;
  for (size_t i = 0; i < items.size(); ++i) {
    const Value& x = items[i];
    if (!x.is_int() || x.as_int() < -1) throw RuntimeError(std::string(name) + ": shape must be a list of non-negative ints (one -1 allowed)");
    if (x.as_int() == -1) {
      if (infer >= 0) throw RuntimeError(std::string(name) + ": only one -1 allowed in shape");
      infer = static_cast<int>(i);
    } else {
      uint64_t d = static_cast<uint64_t>(x.as_int());
      if (d && known > UINT64_MAX / d) overflow = true;
      known *= d;
    }
    s.push_back(x.as_int());
  }
  auto fail = [&]() {
    throw RuntimeError(std::string(name) + ": cannot reshape tensor of shape " + shape_str(t.shape) +
                       " into shape " + shape_str(s));
  };
  const uint64_t n = static_cast<uint64_t>(t.numel);
  if (overflow) fail();
  if (infer >= 0) {
    if (known == 0 || n % known != 0) fail();
    s[infer] = static_cast<int64_t>(n / known);
  } else if (known != n) {
    fail();
  }
  return s;
}

Shape permute_shape(const Shape& in, std::span<const int> dims) {
  Shape out(in.size());
  for (size_t i = 0; i < in.size(); ++i) out[i] = in[dims[i]];
  return out;
}

void permute_kernel(const TensorObj& in, std::span<const int> dims, TensorObj& out) {
  Shape in_st = contiguous_strides(in.shape);
  // Strides of the input, in the order of the output's dims.
  Shape st(in.rank());
  for (size_t i = 0; i < in.rank(); ++i) st[i] = in_st[dims[i]];
  const size_t sz = dtype_size(in.dtype);
  const auto* src = static_cast<const unsigned char*>(in.data());
  auto* dst = static_cast<unsigned char*>(out.data());
  std::array<const Shape*, 1> sts{&st};
  for_each_broadcast<1>(out.shape, sts, [&](int64_t i, int64_t off) {
    std::memcpy(dst + i * sz, src + off * sz, sz);
  });
}

Shape concat_shape(const Value& list, int64_t axis, const char* name, int* norm_axis) {
  if (!list.is_list()) throw RuntimeError(std::string(name) + ": expected a list of tensors, got " + type_name(list));
  const auto& items = list.as_list()->items;
  if (items.empty()) throw RuntimeError(std::string(name) + ": expected a non-empty list of tensors");
  for (const Value& x : items)
    if (!x.is_tensor()) throw RuntimeError(std::string(name) + ": expected a list of tensors, found " + type_name(x));
  const Shape& first = items[0].as_tensor()->shape;
  if (first.empty()) throw RuntimeError(std::string(name) + ": cannot concatenate 0-d tensors");
  int ax = normalize_axis(axis, first.size(), name);
  Shape out = first;
  for (size_t i = 1; i < items.size(); ++i) {
    const Shape& s = items[i].as_tensor()->shape;
    bool ok = s.size() == first.size();
    for (size_t d = 0; ok && d < s.size(); ++d)
      if (static_cast<int>(d) != ax && s[d] != first[d]) ok = false;
    if (!ok)
      throw RuntimeError(std::string(name) + ": shapes " + shape_str(first) + " and " + shape_str(s) +
                         " are incompatible");
    out[ax] += s[ax];
  }
  shape_numel(out, DType::Bool);
  *norm_axis = ax;
  return out;
}

DType concat_dtype(const Value& list) {
  const auto& items = list.as_list()->items;
  DType d = items[0].as_tensor()->dtype;
  for (const Value& x : items) d = promote_dtypes(d, x.as_tensor()->dtype);
  return d;
}

void concat_kernel(const Value& list, int axis, TensorObj& out) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= out.shape[d];
  for (size_t d = axis + 1; d < out.rank(); ++d) inner *= out.shape[d];
  const int64_t out_row = out.shape[axis] * inner;
  int64_t col = 0;  // offset along the axis, in elements of a row
  for (const Value& x : list.as_list()->items) {
    const TensorObj& t = *x.as_tensor();
    const int64_t row = t.shape[axis] * inner;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t e = 0; e < row; ++e) {
        int64_t dst = o * out_row + col + e, src = o * row + e;
        if (dtype_is_float(out.dtype)) out.set_f(dst, t.get_f(src));
        else out.set_i(dst, t.get_i(src));
      }
    col += row;
  }
}

SliceBounds slice_bounds(const TensorObj& t, const Value& axis, const Value& start, const Value& stop,
                         const char* name) {
  if (!axis.is_int()) throw RuntimeError(std::string(name) + ": axis must be int, got " + type_name(axis));
  if (t.rank() == 0) throw RuntimeError(std::string(name) + ": cannot slice a 0-d tensor");
  SliceBounds b;
  b.axis = normalize_axis(axis.as_int(), t.rank(), name);
  const int64_t n = t.shape[b.axis];
  auto bound = [&](const Value& v, int64_t dflt, const char* what) {
    if (v.is_nil()) return dflt;
    if (!v.is_int()) throw RuntimeError(std::string(name) + ": " + what + " must be int or nil, got " + type_name(v));
    int64_t x = v.as_int();
    if (x < 0) x = x < -n ? 0 : x + n;  // Python slice semantics: from the end, clamped
    return x > n ? n : x;
  };
  b.start = bound(start, 0, "start");
  b.stop = bound(stop, n, "stop");
  if (b.stop < b.start) b.stop = b.start;
  return b;
}

void slice_kernel(const TensorObj& in, SliceBounds b, TensorObj& out) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < b.axis; ++d) outer *= in.shape[d];
  for (size_t d = b.axis + 1; d < in.rank(); ++d) inner *= in.shape[d];
  const size_t sz = dtype_size(in.dtype);
  const int64_t in_row = in.shape[b.axis] * inner, out_row = (b.stop - b.start) * inner;
  const auto* src = static_cast<const unsigned char*>(in.data());
  auto* dst = static_cast<unsigned char*>(out.data());
  if (out_row == 0) return;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + o * out_row * sz, src + (o * in_row + b.start * inner) * sz, static_cast<size_t>(out_row) * sz);
}

void copy_kernel(const TensorObj& in, TensorObj& out) { cast_kernel(in, out); }

}  // namespace tessera
