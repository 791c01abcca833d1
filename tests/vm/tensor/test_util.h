// Helpers shared by the tensor and graph tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "vm/core/error.h"
#include "vm/graph/op_table.h"
#include "vm/tensor/kernels.h"
#include "vm/tensor/tensor_api.h"

namespace tessera::testing {

inline Value make_t(const std::vector<double>& data, Shape shape, DType dt = DType::F32) {
  Value v = make_tensor(dt, std::move(shape));
  TensorObj& t = tensor_of(v);
  EXPECT_EQ(static_cast<size_t>(t.numel), data.size());
  for (size_t i = 0; i < data.size(); ++i) t.set_f(static_cast<int64_t>(i), data[i]);
  return v;
}

inline std::vector<double> vals(const Value& v) {
  const TensorObj& t = tensor_of(v);
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel; ++i) out.push_back(t.get_f(i));
  return out;
}

inline std::string fmt(const Value& v) {
  std::string s;
  format_tensor(s, v);
  return s;
}

using Kw = std::vector<std::pair<std::string, Value>>;

// Calls an op of the table by name, as the built-in would be called.
inline Value call(const char* name, std::vector<Value> pos, Kw kw = {}) {
  const OpDef* d = find_op(name);
  if (!d) throw std::logic_error(std::string("no op ") + name);
  std::vector<Value> names, values;
  for (auto& [k, v] : kw) {
    names.push_back(make_str(k));
    values.push_back(v);
  }
  CallArgs a;
  a.pos = pos;
  a.kw_values = values;
  a.kw_names = &names;
  return call_op(*d, a);
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const RuntimeError& e) {
    return e.what();
  }
  return "<no error>";
}

inline Value ilist(std::vector<int64_t> xs) {
  std::vector<Value> v;
  for (int64_t x : xs) v.push_back(Value::integer(x));
  return make_list(std::move(v));
}

inline void expect_close(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol * (1 + std::fabs(b[i]))) << "at " << i;
}

}  // namespace tessera::testing
