// How a trace's object constant reads in its IR (TraceIR::describe_const):
// a function or a built-in by its name, a string by its text in quotes
// (cut after kMaxChars), a list or a tensor by what it is. Made while the
// recorder holds the live value.
#pragma once

#include <cstddef>
#include <string>

#include "vm/core/value.h"

namespace tessera::jit {

inline constexpr size_t kConstDescriptionMaxChars = 40;

std::string describe_constant(const Value& v);

}  // namespace tessera::jit
