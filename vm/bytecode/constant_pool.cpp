#include "vm/bytecode/constant_pool.h"

#include <cstring>

namespace tessera {

namespace {

// Appends an unambiguous encoding of `v`: a tag byte, then the raw payload
// bits (scalars) or length-prefixed contents (strings, lists).
void append_key(std::string& key, const Value& v) {
  key.push_back(static_cast<char>(v.tag()));
  auto append_u64 = [&key](uint64_t x) {
    char buf[8];
    std::memcpy(buf, &x, 8);
    key.append(buf, 8);
  };
  if (v.is_str()) {
    auto s = v.as_str()->view();
    append_u64(s.size());
    key.append(s);
  } else if (v.is_list()) {
    const auto& items = v.as_list()->items;
    append_u64(items.size());
    for (const auto& item : items) append_key(key, item);
  } else {
    append_u64(v.raw_bits());
  }
}

}  // namespace

uint32_t ConstantPool::add(const Value& v) {
  std::string key;
  append_key(key, v);
  auto [it, inserted] = index_.try_emplace(std::move(key), static_cast<uint32_t>(values_.size()));
  if (inserted) values_.push_back(v);
  return it->second;
}

}  // namespace tessera
