// object_layout(): where the interpreter's heap objects keep the fields that
// generated code reads, found by looking at real objects.
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "codegen/host/object_layout.h"
#include "vm/core/value.h"
#include "vm/tensor/tensor.h"

namespace tessera::jit {
namespace {

TensorLayout measure_tensor_layout(const ListLayout& vec) {
  // A vector<int64_t> keeps its data pointer where vector<Value> does.
  TensorObj t(DType::I32, Shape{2, 3});
  const char* base = reinterpret_cast<const char*>(&t);
  TensorLayout l;
  l.dtype_offset = static_cast<size_t>(reinterpret_cast<const char*>(&t.dtype) - base);
  l.shape_begin_offset = static_cast<size_t>(reinterpret_cast<const char*>(&t.shape) - base) + vec.begin_offset;
  l.shape_end_offset = static_cast<size_t>(reinterpret_cast<const char*>(&t.shape) - base) + vec.end_offset;
  l.data_offset = static_cast<size_t>(reinterpret_cast<const char*>(t.data_slot()) - base);
  l.device_copy_offset = static_cast<size_t>(reinterpret_cast<const char*>(t.device_copy_slot()) - base);
  const int64_t* shape_data;
  std::memcpy(&shape_data, base + l.shape_begin_offset, sizeof shape_data);
  const int64_t* shape_end;
  std::memcpy(&shape_end, base + l.shape_end_offset, sizeof shape_end);
  if (shape_data != t.shape.data() || shape_end != t.shape.data() + t.shape.size())
    throw std::runtime_error("host backend: cannot find the shape pointers inside std::vector<int64_t>");
  return l;
}

StrLayout measure_str_layout() {
  const Value v = make_str("ab");  // two bytes: not a shared one-byte string
  const StrObj* s = v.as_str();
  const char* base = reinterpret_cast<const char*>(s);
  StrLayout l;
  l.length_offset = static_cast<size_t>(reinterpret_cast<const char*>(&s->length) - base);
  l.data_offset = static_cast<size_t>(s->data() - base);
  return l;
}

size_t obj_refcount_offset() {
  ListObj o;
  return static_cast<size_t>(reinterpret_cast<const char*>(&o.refcount) - reinterpret_cast<const char*>(&o));
}

// Finds where ListObj keeps its element pointers by looking at a real one:
// the word that equals data() is `begin`, the word that equals data()+size is
// `end`. Layout-independent, so a different standard library (or a debug
// vector) cannot silently break LLEN and LLOAD.
ListLayout measure_list_layout() {
  ListObj list;
  list.items.resize(3);
  ListLayout l;
  l.items_offset = reinterpret_cast<const char*>(&list.items) - reinterpret_cast<const char*>(&list);
  const auto begin = reinterpret_cast<uintptr_t>(list.items.data());
  const auto end = reinterpret_cast<uintptr_t>(list.items.data() + list.items.size());
  bool found_begin = false, found_end = false;
  for (size_t off = 0; off + sizeof(uintptr_t) <= sizeof(list.items); off += sizeof(uintptr_t)) {
    uintptr_t word;
    std::memcpy(&word, reinterpret_cast<const char*>(&list.items) + off, sizeof word);
    if (word == begin && !found_begin) {
      l.begin_offset = off;
      found_begin = true;
    } else if (word == end && !found_end) {
      l.end_offset = off;
      found_end = true;
    }
  }
  if (!found_begin || !found_end)
    throw std::runtime_error("host backend: cannot find the element pointers inside std::vector<Value>");
  return l;
}

}  // namespace

const ObjectLayout& object_layout() {
  // Function-local static: measured once, thread-safe.
  static const ObjectLayout layout = [] {
    ObjectLayout l;
    l.list = measure_list_layout();
    l.tensor = measure_tensor_layout(l.list);
    l.str = measure_str_layout();
    l.refcount_offset = obj_refcount_offset();
    return l;
  }();
  return layout;
}

}  // namespace tessera::jit
