#include "vm/builtins/value_format.h"

#include "vm/core/string_escape.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <system_error>
#include <vector>

#include "vm/builtins/builtin.h"
#include "vm/bytecode/bytecode.h"
#include "vm/core/error.h"
#include "vm/tensor/tensor_api.h"

namespace tessera {

void append_float(std::string& out, double x) {
  if (std::isnan(x)) {
    out += "nan";  // Python prints every nan without a sign
    return;
  }
  if (std::isinf(x)) {
    out += x < 0 ? "-inf" : "inf";
    return;
  }
  if (x == 0.0) {
    out += std::signbit(x) ? "-0.0" : "0.0";
    return;
  }
  // Shortest round-trip digits in scientific form, e.g. "-1.2345e+02";
  // to_chars writes at least two exponent digits, as Python does.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string_view sci(buf, res.ptr - buf);
  size_t epos = sci.find('e');
  int exp = std::atoi(std::string(sci.substr(epos + 1)).c_str());
  // Python's rule, on the rounded digits: scientific when exp < -4 or
  // exp >= 16, i.e. outside 1e-4 <= |x| < 1e16.
  if (exp < -4 || exp >= 16) {
    out += sci;
    return;
  }
  std::string_view mant = sci.substr(0, epos);
  if (mant.front() == '-') {
    out += '-';
    mant.remove_prefix(1);
  }
  std::string digits;  // mantissa digits without the point
  for (char c : mant)
    if (c != '.') digits += c;
  if (exp >= 0) {
    size_t int_len = size_t(exp) + 1;
    if (digits.size() <= int_len) {
      out += digits;
      out.append(int_len - digits.size(), '0');
      out += ".0";
    } else {
      out.append(digits, 0, int_len);
      out += '.';
      out.append(digits, int_len, std::string::npos);
    }
  } else {
    out += "0.";
    out.append(size_t(-exp - 1), '0');
    out += digits;
  }
}

std::string repr_float(double x) {
  std::string s;
  append_float(s, x);
  return s;
}


namespace {

// Everything but lists: no nesting, so no recursion.
void format_leaf(std::string& out, const Value& v, bool nested) {
  switch (v.tag()) {
    case Tag::Undef: out += "<undefined>"; break;  // never visible to scripts
    case Tag::Nil: out += "nil"; break;
    case Tag::Bool: out += v.as_bool() ? "true" : "false"; break;
    case Tag::Int: {
      char buf[24];
      auto res = std::to_chars(buf, buf + sizeof buf, v.as_int());
      out.append(buf, res.ptr);
      break;
    }
    case Tag::Float: append_float(out, v.as_float()); break;
    case Tag::DTypeV: out += dtype_name(v.as_dtype()); break;
    case Tag::Func: out += "<fn " + v.as_func()->name + ">"; break;
    case Tag::Builtin:
      out += "<fn ";
      out += v.as_builtin()->name;
      out += '>';
      break;
    case Tag::Str:
      if (nested)
        append_quoted(out, v.as_str()->view());
      else
        out += v.as_str()->view();
      break;
    case Tag::Tensor: format_tensor(out, v); break;
    case Tag::List: break;  // the caller walks lists
  }
}

}  // namespace

void format_value(std::string& out, const Value& v) {
  if (!v.is_list()) {
    format_leaf(out, v, false);
    return;
  }
  // Iterative walk: `path` holds the lists being printed (outermost first)
  // with the index of the next element; a list already on the path is a cycle.
  struct Frame {
    const ListObj* list;
    size_t next;
  };
  std::vector<Frame> path;
  path.push_back({v.as_list(), 0});
  out += '[';
  while (!path.empty()) {
    Frame& top = path.back();
    if (top.next == top.list->items.size()) {
      out += ']';
      path.pop_back();
      continue;
    }
    if (top.next != 0) out += ", ";
    const Value& item = top.list->items[top.next++];
    if (!item.is_list()) {
      format_leaf(out, item, true);
      continue;
    }
    const ListObj* child = item.as_list();
    bool cycle = false;
    for (const Frame& f : path) cycle = cycle || f.list == child;
    if (cycle) {
      out += "[...]";
      continue;
    }
    if (path.size() >= size_t(kMaxPrintDepth)) throw RuntimeError("value nested too deeply to print");
    path.push_back({child, 0});  // invalidates `top`; not used again
    out += '[';
  }
}

std::string format_value(const Value& v) {
  std::string s;
  format_value(s, v);
  return s;
}

}  // namespace tessera
