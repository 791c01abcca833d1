// How values print (spec §6 "Printing"): the text of print() and str().
#pragma once

#include <string>
#include <string_view>

#include "vm/core/value.h"

namespace tessera {

// Appends the print/str form of v: a top-level str unquoted, lists as
// `[1, 2.5, "a", [true, nil]]` with nested strings quoted and escaped, a list
// that contains itself as `[...]` at the cycle, functions as `<fn NAME>`,
// dtypes by name, tensors via format_tensor. Nesting deeper than
// kMaxPrintDepth lists throws RuntimeError("value nested too deeply to print");
// the walk is iterative, so no input recurses on the C++ stack.
void format_value(std::string& out, const Value& v);
std::string format_value(const Value& v);

constexpr int kMaxPrintDepth = 1000;

// Python's repr(float): shortest round-trip digits, fixed notation for
// 1e-4 <= |x| < 1e16 (with ".0" when there is no fraction), otherwise
// `d.ddde±XX`; "inf", "-inf", "nan", "-0.0".
std::string repr_float(double x);
void append_float(std::string& out, double x);


}  // namespace tessera
