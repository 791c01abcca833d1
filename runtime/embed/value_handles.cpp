#include "runtime/embed/value_handles.h"

namespace tessera::embed {

uint64_t ValueHandles::add(Value v) {
  uint32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    index = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Slot& s = slots_[index];
  s.value = std::move(v);
  s.live = true;
  return (uint64_t{vm_tag_} << 48) | (uint64_t{s.generation} << 32) | (uint64_t{index} + 1);
}

ValueHandles::Slot* ValueHandles::slot(uint64_t id) {
  if ((id >> 48) != vm_tag_) return nullptr;
  const uint64_t index_plus_one = id & 0xffffffffu;
  if (index_plus_one == 0 || index_plus_one > slots_.size()) return nullptr;
  Slot& s = slots_[index_plus_one - 1];
  if (!s.live || s.generation != static_cast<uint16_t>(id >> 32)) return nullptr;
  return &s;
}

Value* ValueHandles::get(uint64_t id) {
  Slot* s = slot(id);
  return s ? &s->value : nullptr;
}

bool ValueHandles::take(uint64_t id, Value& out) {
  Slot* s = slot(id);
  if (!s) return false;
  out = std::move(s->value);
  s->value = Value();
  s->live = false;
  // Generation 0 is never handed out, so a zeroed handle never matches.
  if (++s->generation == 0) s->generation = 1;
  free_.push_back(static_cast<uint32_t>(s - slots_.data()));
  return true;
}

bool ValueHandles::remove(uint64_t id) {
  Value dropped;
  return take(id, dropped);
}

void ValueHandles::clear() {
  slots_.clear();
  free_.clear();
}

}  // namespace tessera::embed
