// Creation kernels: fill, arange, rand/randn (Philox), tensor(nested_list).
#include <cmath>
#include <cstring>

#include "vm/core/error.h"
#include "vm/tensor/kernels.h"
#include "vm/tensor/philox.h"

namespace tessera {

namespace {
// Stores a script scalar into element i, converting like cast().
void store_scalar(TensorObj& out, int64_t i, const Value& v) {
  if (v.is_float()) out.set_f(i, v.as_float());
  else if (v.is_int()) out.set_i(i, v.as_int());
  else out.set_i(i, v.as_bool() ? 1 : 0);
}
}  // namespace

void fill_kernel(TensorObj& out, const Value& v) {
  if (out.numel == 0) return;
  store_scalar(out, 0, v);
  // Replicate the first element's bytes: exact and dtype-agnostic.
  const size_t sz = dtype_size(out.dtype);
  auto* p = static_cast<unsigned char*>(out.data());
  for (int64_t i = 1; i < out.numel; ++i) std::memcpy(p + i * sz, p, sz);
}

int64_t arange_count(const Value& start, const Value& stop, const Value& step, const char* name) {
  for (const Value* v : {&start, &stop, &step})
    if (!v->is_number()) throw RuntimeError(std::string(name) + ": expected numbers, got " + type_name(*v));
  if (step.to_double() == 0) throw RuntimeError(std::string(name) + ": step must not be zero");
  if (start.is_int() && stop.is_int() && step.is_int()) {
    // Exact integer count, done in 128 bits so that extreme ranges cannot overflow.
    __int128 a = start.as_int(), b = stop.as_int(), s = step.as_int();
    __int128 span = b - a;
    if ((span > 0) != (s > 0) || span == 0) return 0;
    __int128 n = (span + s + (s > 0 ? -1 : 1)) / s;
    if (n > (__int128{1} << 40)) throw RuntimeError("tensor too large");
    return static_cast<int64_t>(n);
  }
  double n = std::ceil((stop.to_double() - start.to_double()) / step.to_double());
  if (std::isnan(n)) throw RuntimeError(std::string(name) + ": invalid range");
  if (n <= 0) return 0;
  if (n > 1099511627776.0) throw RuntimeError("tensor too large");
  return static_cast<int64_t>(n);
}

void arange_kernel(const Value& start, const Value& step, TensorObj& out) {
  if (start.is_int() && step.is_int()) {
    uint64_t v = static_cast<uint64_t>(start.as_int());
    for (int64_t i = 0; i < out.numel; ++i, v += static_cast<uint64_t>(step.as_int()))
      out.set_i(i, static_cast<int64_t>(v));
    return;
  }
  const double a = start.to_double(), s = step.to_double();
  for (int64_t i = 0; i < out.numel; ++i) out.set_f(i, a + static_cast<double>(i) * s);
}

void rand_kernel(uint64_t seed, TensorObj& out) {
  for (int64_t i = 0; i < out.numel; ++i) out.set_f(i, philox_uniform(seed, static_cast<uint64_t>(i)));
}

void randn_kernel(uint64_t seed, TensorObj& out) {
  for (int64_t i = 0; i < out.numel; ++i) out.set_f(i, philox_normal(seed, static_cast<uint64_t>(i)));
}

namespace {
[[noreturn]] void ragged(const char* name) { throw RuntimeError(std::string(name) + ": ragged nested list"); }

// Checks that `v` (at depth d) matches `shape`; records the element kinds seen.
void check_nested(const Value& v, const Shape& shape, size_t d, bool& any_float, bool& any_int,
                  const char* name) {
  if (d == shape.size()) {
    if (v.is_list()) ragged(name);
    if (v.is_float()) any_float = true;
    else if (v.is_int()) any_int = true;
    else if (!v.is_bool())
      throw RuntimeError(std::string(name) + ": elements must be numbers or bools, got " + type_name(v));
    return;
  }
  if (!v.is_list() || static_cast<int64_t>(v.as_list()->items.size()) != shape[d]) ragged(name);
  for (const Value& x : v.as_list()->items) check_nested(x, shape, d + 1, any_float, any_int, name);
}

void flatten(const Value& v, TensorObj& out, int64_t& pos) {
  if (!v.is_list()) {
    store_scalar(out, pos++, v);
    return;
  }
  for (const Value& x : v.as_list()->items) flatten(x, out, pos);
}
}  // namespace

ListLayout nested_list_layout(const Value& list, const char* name) {
  if (!list.is_list()) throw RuntimeError(std::string(name) + ": expected a list, got " + type_name(list));
  ListLayout l;
  // The shape comes from the first element at each level; the walk below
  // then checks every other element against it. Bounded by the rank limit,
  // so self-containing lists cannot loop.
  const Value* v = &list;
  while (v->is_list()) {
    if (l.shape.size() == kMaxRank)
      throw RuntimeError(std::string(name) + ": rank must be at most 8");
    const auto& items = v->as_list()->items;
    l.shape.push_back(static_cast<int64_t>(items.size()));
    if (items.empty()) break;
    v = &items[0];
  }
  bool any_float = false, any_int = false;
  check_nested(list, l.shape, 0, any_float, any_int, name);
  l.inferred = any_float ? DType::F32 : any_int ? DType::I64 : shape_numel(l.shape, DType::F32) == 0 ? DType::F32 : DType::Bool;
  return l;
}

void from_list_kernel(const Value& list, TensorObj& out) {
  int64_t pos = 0;
  flatten(list, out, pos);
}

bool allclose(const Value& a, const Value& b, double rtol, double atol, const char* name) {
  check_operand(a, name);
  check_operand(b, name);
  Shape out = broadcast_shapes(operand_shape(a), operand_shape(b), name);
  auto get = [](const Value& v, int64_t off) {
    if (v.is_tensor()) return v.as_tensor()->get_f(off);
    return v.is_bool() ? (v.as_bool() ? 1.0 : 0.0) : v.to_double();
  };
  Shape sa = broadcast_strides(operand_shape(a), out), sb = broadcast_strides(operand_shape(b), out);
  std::array<const Shape*, 2> st{&sa, &sb};
  bool ok = true;
  for_each_broadcast<2>(out, st, [&](int64_t, int64_t oa, int64_t ob) {
    double x = get(a, oa), y = get(b, ob);
    if (x == y) return;  // covers equal infinities
    if (!(std::fabs(x - y) <= atol + rtol * std::fabs(y))) ok = false;  // NaN is never close
  });
  return ok;
}

}  // namespace tessera
