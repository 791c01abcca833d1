#include "runtime/jit_params.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace tessera {

namespace {

struct ParamInfo {
  std::string_view name;
  int64_t def;
  int64_t lo;
  int64_t hi;
  std::string_view description;
  int64_t JitParams::*field;
};

constexpr ParamInfo kParams[] = {
#define JIT_PARAM(name, def, lo, hi, desc) {#name, def, lo, hi, desc, &JitParams::name},
#include "runtime/jit_params.def"
#undef JIT_PARAM
};

// A table row whose default lies outside its own range would make the
// defaults unreachable through --jit-param; catch that at compile time.
#define JIT_PARAM(name, def, lo, hi, desc) \
  static_assert((lo) <= (def) && (def) <= (hi), "jit_params.def: default of " #name " out of range");
#include "runtime/jit_params.def"
#undef JIT_PARAM

}  // namespace

std::string JitParams::known_names() {
  std::string s;
  for (const ParamInfo& p : kParams) {
    if (!s.empty()) s += ", ";
    s += p.name;
  }
  return s;
}

void JitParams::set(std::string_view name_eq_value) {
  const size_t eq = name_eq_value.find('=');
  if (eq == std::string_view::npos) {
    throw std::invalid_argument(
        fmt::format("JIT parameter must be NAME=VALUE, got '{}'", name_eq_value));
  }
  const std::string_view name = name_eq_value.substr(0, eq);
  const std::string_view value = name_eq_value.substr(eq + 1);
  for (const ParamInfo& p : kParams) {
    if (p.name != name) continue;
    // Words some parameters accept for a number (tier=auto).
    if (p.name == "tier" && value == "auto") {
      this->*p.field = 0;
      return;
    }
    int64_t v = 0;
    const char* first = value.data();
    const char* last = value.data() + value.size();
    // from_chars accepts no sign but '-', no spaces and no base prefix: exactly
    // a decimal integer, so "10x", " 10" and "+10" are rejected, not truncated.
    auto [ptr, ec] = std::from_chars(first, last, v);
    if (value.empty() || ec != std::errc() || ptr != last || v < p.lo || v > p.hi) {
      throw std::invalid_argument(fmt::format("JIT parameter {} expects an integer in {}..{}, got '{}'",
                                              p.name, p.lo, p.hi, value));
    }
    this->*p.field = v;
    return;
  }
  throw std::invalid_argument(
      fmt::format("unknown JIT parameter '{}' (known: {})", name, known_names()));
}

std::vector<std::pair<std::string, int64_t>> JitParams::list() const {
  std::vector<std::pair<std::string, int64_t>> out;
  out.reserve(std::size(kParams));
  for (const ParamInfo& p : kParams) out.emplace_back(std::string(p.name), this->*p.field);
  return out;
}

std::string JitParams::describe_all() {
  size_t width = 4;  // "NAME"
  for (const ParamInfo& p : kParams) width = std::max(width, p.name.size());
  std::string s = fmt::format("  {:<{}}  {:>7}  {:<9}  {}\n", "NAME", width, "DEFAULT", "RANGE", "MEANING");
  for (const ParamInfo& p : kParams) {
    s += fmt::format("  {:<{}}  {:>7}  {:<9}  {}\n", p.name, width, p.def,
                     fmt::format("{}..{}", p.lo, p.hi), p.description);
  }
  return s;
}

}  // namespace tessera
