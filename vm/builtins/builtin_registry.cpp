// The built-in registry: the scalar table, the tensor table and the dtype
// constants merged into one sorted, immutable array, built once on first use.
#include <algorithm>
#include <cassert>
#include <string>
#include <vector>

#include "vm/builtins/builtin.h"
#include "vm/core/error.h"
#include "vm/graph/op_table.h"  // tensor_builtins()

namespace tessera {

[[noreturn]] void throw_arg_type(const char* fn, const char* expected, const Value& got) {
  throw RuntimeError(std::string(fn) + ": expected " + expected + ", got " + type_name(got));
}

int64_t arg_int(const char* fn, const Value& v) {
  if (!v.is_int()) throw_arg_type(fn, "int", v);
  return v.as_int();
}

double arg_number(const char* fn, const Value& v) {
  if (!v.is_number()) throw_arg_type(fn, "int or float", v);
  return v.to_double();
}

void check_arity(const char* fn, const CallArgs& args, int min_args, int max_args,
                 bool accepts_kwargs) {
  if (!accepts_kwargs && args.kw_count() != 0)
    throw RuntimeError(std::string(fn) + "() does not take keyword arguments");
  const auto n = static_cast<int64_t>(args.pos.size());
  if (n >= min_args && (max_args < 0 || n <= max_args)) return;
  throw RuntimeError(arity_message(fn, min_args, max_args, static_cast<int>(n)));
}

std::string arity_message(const char* fn, int min_args, int max_args, int given) {
  std::string msg = std::string(fn) + "() takes ";
  if (max_args < 0)
    msg += "at least " + std::to_string(min_args);
  else if (min_args == max_args)
    msg += std::to_string(min_args);
  else
    msg += std::to_string(min_args) + " to " + std::to_string(max_args);
  // Singular only when a single count is shown and it is 1.
  const bool one = min_args == 1 && (max_args == 1 || max_args < 0);
  msg += one ? " argument" : " arguments";
  msg += " (" + std::to_string(given) + " given)";
  return msg;
}

namespace {

struct Entry {
  std::string_view name;
  const BuiltinDef* def;  // null for a dtype constant
  DType dtype;
};

std::vector<Entry> build_registry() {
  std::vector<Entry> r;
  for (const BuiltinDef& d : scalar_builtins()) r.push_back({d.name, &d, DType::F32});
  for (const BuiltinDef& d : tensor_builtins()) r.push_back({d.name, &d, DType::F32});
  for (int i = 0; i < kNumDTypes; ++i) {
    auto d = static_cast<DType>(i);
    r.push_back({dtype_name(d), nullptr, d});
  }
  // stable: on a (buggy) duplicate name the scalar table's entry stays first
  // and wins, deterministically; the unit tests check there are none.
  std::stable_sort(r.begin(), r.end(),
                   [](const Entry& a, const Entry& b) { return a.name < b.name; });
  auto dup = std::adjacent_find(r.begin(), r.end(),
                                [](const Entry& a, const Entry& b) { return a.name == b.name; });
  assert(dup == r.end() && "a built-in name is defined twice");
  (void)dup;
  return r;
}

// Function-local static: built once (thread-safe), immutable afterwards.
const Entry* find(std::string_view name) {
  static const std::vector<Entry> registry = build_registry();
  auto it = std::lower_bound(registry.begin(), registry.end(), name,
                             [](const Entry& e, std::string_view n) { return e.name < n; });
  return it != registry.end() && it->name == name ? &*it : nullptr;
}

}  // namespace

bool is_builtin_global(std::string_view name) { return find(name) != nullptr; }

Value builtin_global_value(std::string_view name) {
  const Entry* e = find(name);
  if (e == nullptr) throw RuntimeError("name '" + std::string(name) + "' is not defined");
  return e->def != nullptr ? Value::builtin(e->def) : Value::dtype(e->dtype);
}

}  // namespace tessera
