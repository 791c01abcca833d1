#include "vm/interp/indexing.h"

#include <fmt/format.h>

#include "vm/core/error.h"
#include "vm/tensor/tensor_api.h"

namespace tessera {

namespace {

// Resolves a list/str index (negative from the end) or raises.
size_t sequence_index(const Value* idx, size_t n, size_t length, const char* what) {
  if (n != 1)
    throw RuntimeError(fmt::format("{} index takes 1 index ({} given)", what, n));
  if (!idx->is_int())
    throw RuntimeError(fmt::format("{} index must be int, got {}", what, type_name(*idx)));
  const std::optional<size_t> at = sequence_position(idx->as_int(), length);
  // The spec's message, then the index and the length it missed.
  if (!at) throw RuntimeError(fmt::format("index out of range: {} ({} of length {})", idx->as_int(), what, length));
  return *at;
}

}  // namespace

std::optional<size_t> sequence_position(int64_t i, size_t length) {
  if (i < 0) i += static_cast<int64_t>(length);
  if (i < 0 || static_cast<uint64_t>(i) >= length) return std::nullopt;
  return static_cast<size_t>(i);
}

Value index_get(const Value& obj, const Value* idx, size_t n) {
  switch (obj.tag()) {
    case Tag::List: {
      const auto& items = obj.as_list()->items;
      return items[sequence_index(idx, n, items.size(), "list")];
    }
    case Tag::Str: {
      auto s = obj.as_str()->view();
      return make_str(s.substr(sequence_index(idx, n, s.size(), "str"), 1));
    }
    case Tag::Tensor:
      return tensor_get_index(obj, idx, n);
    default:
      throw RuntimeError(fmt::format("{} is not indexable", type_name(obj)));
  }
}

void index_set(const Value& obj, const Value* idx, size_t n, const Value& v) {
  switch (obj.tag()) {
    case Tag::List: {
      auto& items = obj.as_list()->items;
      items[sequence_index(idx, n, items.size(), "list")] = v;
      return;
    }
    case Tag::Tensor:
      tensor_set_index(obj, idx, n, v);
      return;
    default:
      throw RuntimeError(fmt::format("{} does not support item assignment", type_name(obj)));
  }
}

}  // namespace tessera
