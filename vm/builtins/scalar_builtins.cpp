// The scalar, string and list built-ins of spec §6 (the tensor table owns
// the elementwise math built-ins of vm/tensor/elementwise_ops.def, abs exp
// ... softplus erf, and min max, which accept scalars too).
#include <vector>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <ostream>
#include <string>
#include <utility>

#include "vm/builtins/builtin.h"
#include "vm/builtins/value_format.h"
#include "vm/core/string_escape.h"
#include "vm/core/error.h"
#include "vm/tensor/tensor_api.h"

namespace tessera {
namespace {

// Above this, list(n, init) refuses rather than risk exhausting memory
// (16 bytes per element: 1.6 GB at the limit).
constexpr int64_t kMaxListSize = 100'000'000;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::string_view strip(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Python-style literal for messages: int: invalid literal 'abc'.
[[noreturn]] void invalid_literal(const char* fn, std::string_view s) {
  std::string msg = std::string(fn) + ": invalid literal ";
  append_quoted(msg, s, '\'');
  throw RuntimeError(msg);
}

// A float that must become an int (int, floor, ceil): nan, inf and values
// outside int64 are errors rather than undefined behaviour.
int64_t float_to_int(const char* fn, double x) {
  double t = std::trunc(x);
  // [-2**63, 2**63) is exactly the range of int64; the negated test also
  // rejects nan.
  if (!(t >= -9223372036854775808.0 && t < 9223372036854775808.0))
    throw RuntimeError(std::string(fn) + ": cannot convert " + repr_float(x) + " to int");
  return static_cast<int64_t>(t);
}

// Decimal digits with optional single underscores between them (as Python's
// int() accepts), an optional sign, surrounding whitespace.
int64_t parse_int(std::string_view text) {
  std::string_view s = strip(text);
  bool neg = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    neg = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) invalid_literal("int", text);
  uint64_t mag = 0;
  bool prev_digit = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '_' && prev_digit && i + 1 < s.size()) {
      prev_digit = false;
      continue;
    }
    if (c < '0' || c > '9') invalid_literal("int", text);
    prev_digit = true;
    uint64_t d = uint64_t(c - '0');
    // Saturate past 2**63 so an overlong literal is detected without overflow.
    mag = mag > (UINT64_MAX - d) / 10 ? UINT64_MAX : mag * 10 + d;
  }
  const uint64_t limit = neg ? (uint64_t(1) << 63) : (uint64_t(1) << 63) - 1;
  if (mag > limit) {
    std::string msg = "int: literal out of range ";
    append_quoted(msg, text, '\'');
    throw RuntimeError(msg);
  }
  return neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
}

// Python's float(): decimal or exponent forms, "inf"/"infinity"/"nan" in any
// case, optional sign, underscores between digits, surrounding whitespace.
double parse_float(std::string_view text) {
  std::string_view s = strip(text);
  std::string clean;  // without sign and underscores
  bool neg = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    neg = s.front() == '-';
    s.remove_prefix(1);
  }
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool digit_before = i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9';
    bool digit_after = i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '9';
    if (c == '_' && digit_before && digit_after) continue;
    // from_chars would accept a second sign, "nan(...)" and hex digits
    // after "0x" under no format we use, but not these: reject up front.
    if (c == '+' || c == '-') {
      if (i == 0 || (s[i - 1] != 'e' && s[i - 1] != 'E')) invalid_literal("float", text);
    } else if (c == '(' || c == ')' || c == '_') {
      invalid_literal("float", text);
    }
    clean += c;
  }
  if (clean.empty()) invalid_literal("float", text);
  double v = 0;
  auto res = std::from_chars(clean.data(), clean.data() + clean.size(), v,
                             std::chars_format::general);
  if (res.ptr != clean.data() + clean.size()) invalid_literal("float", text);
  if (res.ec == std::errc::result_out_of_range) {
    // Python gives inf for overflow and 0 (or a subnormal) for underflow;
    // strtod computes exactly that.
    v = std::strtod(clean.c_str(), nullptr);
  } else if (res.ec != std::errc()) {
    invalid_literal("float", text);
  }
  return neg ? -v : v;
}

// ------------------------------------------------------------- the built-ins
// Arity and keyword checks are done by the table wrapper below.

Value bi_print(BuiltinContext& ctx, const CallArgs& a) {
  std::string line;
  for (size_t i = 0; i < a.pos.size(); ++i) {
    if (i != 0) line += ' ';
    format_value(line, a.pos[i]);
  }
  line += '\n';
  ctx.out().write(line.data(), static_cast<std::streamsize>(line.size()));
  return Value::nil();
}

Value bi_assert(BuiltinContext&, const CallArgs& a) {
  const Value& c = a.pos[0];
  if (!c.is_bool()) throw RuntimeError(std::string("expected bool, got ") + type_name(c));
  if (c.as_bool()) return Value::nil();
  if (a.pos.size() < 2) throw RuntimeError("assertion failed");
  throw RuntimeError("assertion failed: " + format_value(a.pos[1]));
}

Value bi_len(BuiltinContext&, const CallArgs& a) {
  const Value& x = a.pos[0];
  if (x.is_str()) return Value::integer(static_cast<int64_t>(x.as_str()->length));
  if (x.is_list()) return Value::integer(static_cast<int64_t>(x.as_list()->items.size()));
  if (x.is_tensor()) return Value::integer(tensor_len(x));
  throw_arg_type("len", "str, list or tensor", x);
}

Value bi_str(BuiltinContext&, const CallArgs& a) {
  if (a.pos[0].is_str()) return a.pos[0];  // immutable: share it
  return make_str(format_value(a.pos[0]));
}

Value bi_int(BuiltinContext&, const CallArgs& a) {
  const Value& x = a.pos[0];
  switch (x.tag()) {
    case Tag::Int: return x;
    case Tag::Bool: return Value::integer(x.as_bool() ? 1 : 0);
    case Tag::Float: return Value::integer(float_to_int("int", x.as_float()));
    case Tag::Str: return Value::integer(parse_int(x.as_str()->view()));
    default: throw_arg_type("int", "int, float, bool or str", x);
  }
}

Value bi_float(BuiltinContext&, const CallArgs& a) {
  const Value& x = a.pos[0];
  switch (x.tag()) {
    case Tag::Int: return Value::number(double(x.as_int()));
    case Tag::Float: return x;
    case Tag::Bool: return Value::number(x.as_bool() ? 1.0 : 0.0);
    case Tag::Str: return Value::number(parse_float(x.as_str()->view()));
    default: throw_arg_type("float", "int, float, bool or str", x);
  }
}

Value bi_type(BuiltinContext&, const CallArgs& a) { return type_name_str(a.pos[0]); }

Value bi_floor(BuiltinContext&, const CallArgs& a) {
  const Value& x = a.pos[0];
  if (x.is_int()) return x;
  if (!x.is_float()) throw_arg_type("floor", "int or float", x);
  return Value::integer(float_to_int("floor", std::floor(x.as_float())));
}

Value bi_ceil(BuiltinContext&, const CallArgs& a) {
  const Value& x = a.pos[0];
  if (x.is_int()) return x;
  if (!x.is_float()) throw_arg_type("ceil", "int or float", x);
  return Value::integer(float_to_int("ceil", std::ceil(x.as_float())));
}

Value bi_list(BuiltinContext&, const CallArgs& a) {
  int64_t n = arg_int("list", a.pos[0]);
  if (n < 0) throw RuntimeError("list: size must not be negative, got " + std::to_string(n));
  if (n > kMaxListSize) throw RuntimeError("list: size too large");
  // Memory that runs out is `out of memory`, as for every allocation (the
  // interpreter says so, with the --max-memory note).
  return make_list(std::vector<Value>(static_cast<size_t>(n), a.pos[1]));
}

ListObj& list_arg(const char* fn, const Value& v) {
  if (!v.is_list()) throw_arg_type(fn, "list", v);
  return *v.as_list();
}

Value bi_push(BuiltinContext&, const CallArgs& a) {
  ListObj& l = list_arg("push", a.pos[0]);
  Value x = a.pos[1];  // own a reference before the vector may reallocate
  l.items.push_back(std::move(x));
  return Value::nil();
}

Value bi_pop(BuiltinContext&, const CallArgs& a) {
  ListObj& l = list_arg("pop", a.pos[0]);
  if (l.items.empty()) throw RuntimeError("pop from empty list");
  Value last = std::move(l.items.back());
  l.items.pop_back();
  return last;
}

Value bi_clock(BuiltinContext&, const CallArgs&) {
  auto t = std::chrono::steady_clock::now().time_since_epoch();
  return Value::number(std::chrono::duration<double>(t).count());
}

Value bi_args(BuiltinContext& ctx, const CallArgs&) {
  std::vector<Value> items;
  items.reserve(ctx.script_args().size());
  for (const std::string& s : ctx.script_args()) items.push_back(make_str(s));
  return make_list(std::move(items));
}

Value bi_fmt(BuiltinContext&, const CallArgs& a) {
  double x = arg_number("fmt", a.pos[0]);
  int64_t digits = arg_int("fmt", a.pos[1]);
  if (digits < 0 || digits > 100)
    throw RuntimeError("fmt: digits must be between 0 and 100, got " + std::to_string(digits));
  // Non-finite values print as print() prints them ("nan", "inf", "-inf"),
  // not as printf's sign-carrying "-nan".
  if (!std::isfinite(x)) return make_str(std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
  int d = static_cast<int>(digits);
  int n = std::snprintf(nullptr, 0, "%.*f", d, x);
  std::vector<char> buf(static_cast<size_t>(n) + 1);
  std::snprintf(buf.data(), buf.size(), "%.*f", d, x);
  return make_str(std::string_view(buf.data(), static_cast<size_t>(n)));
}

// ------------------------------------------------------------------ table
// One row per built-in; the BuiltinDef for row I calls checked<I>, which
// applies the row's arity before the implementation runs, so the counts
// live in exactly one place.
struct Row {
  const char* name;
  BuiltinFn impl;
  int min_args;
  int max_args;
};

constexpr Row kRows[] = {
    {"print", bi_print, 0, -1}, {"assert", bi_assert, 1, 2}, {"len", bi_len, 1, 1},
    {"str", bi_str, 1, 1},      {"int", bi_int, 1, 1},       {"float", bi_float, 1, 1},
    {"type", bi_type, 1, 1},    {"floor", bi_floor, 1, 1},   {"ceil", bi_ceil, 1, 1},
    {"list", bi_list, 2, 2},    {"push", bi_push, 2, 2},     {"pop", bi_pop, 1, 1},
    {"clock", bi_clock, 0, 0},  {"args", bi_args, 0, 0},     {"fmt", bi_fmt, 2, 2},
};
constexpr size_t kNumRows = std::size(kRows);

template <size_t I>
Value checked(BuiltinContext& ctx, const CallArgs& args) {
  constexpr const Row& r = kRows[I];
  check_arity(r.name, args, r.min_args, r.max_args, false);
  return r.impl(ctx, args);
}

template <size_t... I>
constexpr std::array<BuiltinDef, kNumRows> make_defs(std::index_sequence<I...>) {
  return {BuiltinDef{kRows[I].name, &checked<I>, kRows[I].min_args, kRows[I].max_args, false}...};
}

constexpr std::array<BuiltinDef, kNumRows> kDefs = make_defs(std::make_index_sequence<kNumRows>());

}  // namespace

std::span<const BuiltinDef> scalar_builtins() { return kDefs; }

}  // namespace tessera
