// Where the interpreter's heap objects keep the fields that generated code
// reads, measured on real objects rather than assumed (a different standard
// library, or a debug vector, cannot silently break LLEN, LLOAD or TDIM).
#pragma once

#include <cstddef>

namespace tessera::jit {

// Where a ListObj keeps its elements (libstdc++'s vector is {begin, end,
// capacity}, but we do not hard-code that).
struct ListLayout {
  size_t items_offset = 0;  // offset of ListObj::items in ListObj
  size_t begin_offset = 0;  // offset of the data pointer inside the vector
  size_t end_offset = 0;    // offset of the end pointer inside the vector
};

// Where a TensorObj keeps its dtype, shape and data, and its device copy
// (element accesses test it first: vm/tensor/device_copy.h).
struct TensorLayout {
  size_t dtype_offset = 0;        // DType (one byte)
  size_t shape_begin_offset = 0;  // the data pointer of the shape's vector<int64_t>
  size_t shape_end_offset = 0;    // its end pointer (rank = (end - begin) / 8)
  size_t data_offset = 0;         // the host buffer's pointer
  size_t device_copy_offset = 0;  // DeviceCopy*: non-null while a device holds the elements
};

// Where a StrObj keeps its length and its bytes (which follow the object).
struct StrLayout {
  size_t length_offset = 0;  // size_t
  size_t data_offset = 0;    // the first byte
};

struct ObjectLayout {
  ListLayout list;
  TensorLayout tensor;
  StrLayout str;
  // Offset of Obj::refcount (a uint32_t) in every heap object (Obj has a
  // vtable, so offsetof is not usable).
  size_t refcount_offset = 0;
};

// Measured once on real objects (the first call), then cached. Throws
// std::runtime_error if a layout cannot be found.
const ObjectLayout& object_layout();

}  // namespace tessera::jit
