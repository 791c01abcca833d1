// Generic element access `obj[i, ...]` and `obj[i, ...] = v` for every
// indexable type (lists, strings, tensors); the interpreter inlines the
// list/int fast path and calls these for everything else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "vm/core/value.h"

namespace tessera {

// Lists and strings take one int index (negative counts from the end);
// tensors take up to rank int indices (see tensor_api.h).
Value index_get(const Value& obj, const Value* idx, size_t n);
// The element a list or string index `i` names (negative: from the end) in a
// sequence of `length`, or none when it is out of range.
std::optional<size_t> sequence_position(int64_t i, size_t length);
void index_set(const Value& obj, const Value* idx, size_t n, const Value& v);

}  // namespace tessera
