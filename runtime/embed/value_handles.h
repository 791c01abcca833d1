// ValueHandles: the values an embedding host holds (tsr_value), one table
// per VM.
//
// A handle is an integer, not a pointer, so that every misuse the C ABI
// promises to detect is a range or tag check rather than a read of freed
// memory: bits 0-31 are the slot index + 1, bits 32-47 the slot's
// generation (bumped when the slot is freed, so a stale copy of a handle
// does not name the slot's next value), bits 48-63 the VM's tag (a handle
// of another VM does not match).
#pragma once

#include <cstdint>
#include <vector>

#include "vm/core/value.h"

namespace tessera::embed {

class ValueHandles {
 public:
  explicit ValueHandles(uint16_t vm_tag) : vm_tag_(vm_tag) {}

  uint64_t add(Value v);
  // The value of a live handle of this table, else null.
  Value* get(uint64_t id);
  // Frees a live handle; false if it is not one.
  bool remove(uint64_t id);
  // Removes a live handle and gives its value (false if not live).
  bool take(uint64_t id, Value& out);
  void clear();
  size_t live() const { return slots_.size() - free_.size(); }

 private:
  struct Slot {
    Value value;
    uint16_t generation = 1;
    bool live = false;
  };
  Slot* slot(uint64_t id);

  uint16_t vm_tag_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
};

}  // namespace tessera::embed
