// Per-function constant table with de-duplication.
//
// Two constants are the same only when they have the same type and the same
// bits: int 1 and float 1.0 stay distinct, as do 0.0 and -0.0 (they print
// differently), and a NaN is matched by bit pattern rather than by `==`.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "vm/core/value.h"

namespace tessera {

class ConstantPool {
 public:
  // Index of `v` in the table, adding it if new. Supports the kinds the
  // compiler emits: int, float, str, and lists of those.
  uint32_t add(const Value& v);

  size_t size() const { return values_.size(); }
  // Moves the table out (the pool is spent afterwards).
  std::vector<Value> take() { index_.clear(); return std::move(values_); }

 private:
  std::vector<Value> values_;
  std::unordered_map<std::string, uint32_t> index_;  // identity key -> index
};

}  // namespace tessera
