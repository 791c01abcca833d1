// Value: the interpreter's 16-byte tagged value.
//
// Scalars (nil, bool, int, float, dtype) and references to immortal things
// (user functions, built-ins) live inline: no heap allocation. Strings, lists
// and tensors are reference-counted heap objects (Obj); Value copy/move/destroy
// maintain the count. A 16-byte tag+payload (rather than NaN-boxing) keeps the
// full 64-bit signed int range unboxed, as the language requires.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {

struct FunctionProto;  // vm/bytecode/bytecode.h
struct BuiltinDef;     // vm/core/builtin_def.h

// Tensor element types. Order is part of the ABI of the op table.
enum class DType : uint8_t { F32, F16, BF16, I32, I64, Bool };
constexpr int kNumDTypes = 6;
const char* dtype_name(DType d);

// Tags at or above Tag::Str are heap objects (refcounted).
enum class Tag : uint8_t {
  Undef,    // internal: a global that was declared but whose `let` has not run
  Nil,
  Bool,
  Int,
  Float,
  DTypeV,   // a dtype value such as f32
  Func,     // user function (FunctionProto*, owned by the Module)
  Builtin,  // built-in function (const BuiltinDef*, static)
  Str,      // StrObj*
  List,     // ListObj*
  Tensor,   // TensorObj*
};

enum class ObjKind : uint8_t { Str, List, Tensor };

// Heap object header. The virtual destructor lets each component define its
// own object type (TensorObj lives in vm/tensor) without core knowing it.
struct Obj {
  uint32_t refcount = 1;  // a new object starts owned by exactly one Value
  ObjKind kind;
  explicit Obj(ObjKind k) : kind(k) {}
  virtual ~Obj() = default;
};

// Frees an object whose count reached zero. Iterative: a million nested
// lists are freed without deep C++ recursion.
void free_object(Obj* o);

class Value {
 public:
  Value() : tag_(Tag::Nil) { u_.i = 0; }
  ~Value() { release(); }

  Value(const Value& o) : tag_(o.tag_), u_(o.u_) { retain(); }
  Value(Value&& o) noexcept : tag_(o.tag_), u_(o.u_) { o.tag_ = Tag::Nil; }
  Value& operator=(const Value& o) {
    if (this != &o) {
      o.retain();
      release();
      tag_ = o.tag_;
      u_ = o.u_;
    }
    return *this;
  }
  Value& operator=(Value&& o) noexcept {
    if (this != &o) {
      release();
      tag_ = o.tag_;
      u_ = o.u_;
      o.tag_ = Tag::Nil;
    }
    return *this;
  }

  // Constructors for each kind.
  static Value nil() { return Value(); }
  static Value undef() { Value v; v.tag_ = Tag::Undef; return v; }
  static Value boolean(bool b) { Value v; v.tag_ = Tag::Bool; v.u_.i = 0; v.u_.b = b; return v; }
  static Value integer(int64_t i) { Value v; v.tag_ = Tag::Int; v.u_.i = i; return v; }
  static Value number(double f) { Value v; v.tag_ = Tag::Float; v.u_.f = f; return v; }
  static Value dtype(DType d) { Value v; v.tag_ = Tag::DTypeV; v.u_.i = 0; v.u_.dt = d; return v; }
  static Value function(FunctionProto* p) { Value v; v.tag_ = Tag::Func; v.u_.fn = p; return v; }
  static Value builtin(const BuiltinDef* b) { Value v; v.tag_ = Tag::Builtin; v.u_.bi = b; return v; }
  // Takes over the caller's reference (a fresh object has refcount 1).
  static Value adopt(Obj* o);
  // A new reference to an object someone else owns (increments the count).
  static Value borrow(Obj* o) {
    ++o->refcount;
    return adopt(o);
  }

  Tag tag() const { return tag_; }
  bool is_undef() const { return tag_ == Tag::Undef; }
  bool is_nil() const { return tag_ == Tag::Nil; }
  bool is_bool() const { return tag_ == Tag::Bool; }
  bool is_int() const { return tag_ == Tag::Int; }
  bool is_float() const { return tag_ == Tag::Float; }
  bool is_number() const { return tag_ == Tag::Int || tag_ == Tag::Float; }
  bool is_dtype() const { return tag_ == Tag::DTypeV; }
  bool is_func() const { return tag_ == Tag::Func; }
  bool is_builtin() const { return tag_ == Tag::Builtin; }
  bool is_callable() const { return tag_ == Tag::Func || tag_ == Tag::Builtin; }
  bool is_str() const { return tag_ == Tag::Str; }
  bool is_list() const { return tag_ == Tag::List; }
  bool is_tensor() const { return tag_ == Tag::Tensor; }
  bool is_obj() const { return tag_ >= Tag::Str; }

  bool as_bool() const { return u_.b; }
  int64_t as_int() const { return u_.i; }
  double as_float() const { return u_.f; }
  // int or float as double (caller checked is_number()).
  double to_double() const { return tag_ == Tag::Int ? double(u_.i) : u_.f; }
  DType as_dtype() const { return u_.dt; }
  FunctionProto* as_func() const { return u_.fn; }
  const BuiltinDef* as_builtin() const { return u_.bi; }
  Obj* as_obj() const { return u_.obj; }
  struct StrObj* as_str() const { return reinterpret_cast<struct StrObj*>(u_.obj); }
  struct ListObj* as_list() const { return reinterpret_cast<struct ListObj*>(u_.obj); }
  struct TensorObj* as_tensor() const { return reinterpret_cast<struct TensorObj*>(u_.obj); }

  // Memory layout, for code generators: a 1-byte Tag at offset 0, the 8-byte
  // payload at offset 8.
  static constexpr size_t kTagOffset = 0;
  static constexpr size_t kPayloadOffset = 8;

  // Raw payload bits, for identity comparison and the JIT.
  uint64_t raw_bits() const { uint64_t r; std::memcpy(&r, &u_, 8); return r; }

  // Gives up ownership of the object without touching its count; the Value
  // becomes nil. Used by free_object to tear down lists iteratively.
  Obj* detach() { Obj* o = u_.obj; tag_ = Tag::Nil; u_.i = 0; return o; }

  // In-place updates that keep the tag (hot interpreter paths).
  void set_int(int64_t i) { release(); tag_ = Tag::Int; u_.i = i; }
  void set_float(double f) { release(); tag_ = Tag::Float; u_.f = f; }
  void set_bool(bool b) { release(); tag_ = Tag::Bool; u_.i = 0; u_.b = b; }

 private:
  void retain() const {
    if (tag_ >= Tag::Str) ++u_.obj->refcount;
  }
  void release() {
    if (tag_ >= Tag::Str && --u_.obj->refcount == 0) free_object(u_.obj);
  }

  Tag tag_;
  union Payload {
    bool b;
    int64_t i;
    double f;
    DType dt;
    FunctionProto* fn;
    const BuiltinDef* bi;
    Obj* obj;
  } u_;
};
static_assert(sizeof(Value) == 16, "Value must stay 16 bytes");

// Immutable byte string. Bytes follow the header.
struct StrObj : Obj {
  size_t length;
  char* data() { return reinterpret_cast<char*>(this + 1); }
  const char* data() const { return reinterpret_cast<const char*>(this + 1); }
  std::string_view view() const { return {data(), length}; }
  StrObj() : Obj(ObjKind::Str), length(0) {}
  // Allocated with room for the bytes (make_str); freed unsized to match.
  static void operator delete(void* p) { ::operator delete(p); }
};
// A string of the bytes of `s`. Strings of at most one byte are shared
// (made once per thread), so their count says nothing about who holds them.
Value make_str(std::string_view s);
// This thread's 256 shared one-byte strings, indexed by byte (all made on
// the first call): what make_str gives for a string of one byte. Compiled
// traces index it (SCHAR, through JitContext).
const Value* one_byte_strings();
// The string `a` followed by `b`, built in place (one allocation).
Value concat_str(std::string_view a, std::string_view b);

class ListHeap;

// Mutable heterogeneous list with reference semantics.
struct ListObj : Obj {
  std::vector<Value> items;
  ListObj() : Obj(ObjKind::List) {}
  ~ListObj() override;
  // The cycle collector's bookkeeping (vm/core/list_heap.h): the heap the
  // list joined (null: none), its place in that heap's table, and the count
  // that a collection works with.
  ListHeap* heap = nullptr;
  size_t gc_index = 0;
  int64_t gc_refs = 0;
};
Value make_list(std::vector<Value> items = {});

// The type name that `type(x)` returns: "nil", "bool", "int", "float", "str",
// "list", "tensor", "fn", "dtype".
const char* type_name(const Value& v);
// The same name as a string Value (what `type(x)` returns), made once per
// thread and shared: the JIT folds `type(x)` of a value of known type to it.
const Value& type_name_str(const Value& v);

inline Value Value::adopt(Obj* o) {
  Value v;
  switch (o->kind) {
    case ObjKind::Str: v.tag_ = Tag::Str; break;
    case ObjKind::List: v.tag_ = Tag::List; break;
    case ObjKind::Tensor: v.tag_ = Tag::Tensor; break;
  }
  v.u_.obj = o;
  return v;
}

}  // namespace tessera
