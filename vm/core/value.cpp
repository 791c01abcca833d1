#include "vm/core/value.h"

#include "vm/core/list_heap.h"

#include <new>


namespace tessera {

const char* dtype_name(DType d) {
  static constexpr const char* kNames[kNumDTypes] = {"f32", "f16", "bf16", "i32", "i64", "bool"};
  return kNames[static_cast<int>(d)];
}

const char* type_name(const Value& v) {
  switch (v.tag()) {
    case Tag::Undef: return "undefined";
    case Tag::Nil: return "nil";
    case Tag::Bool: return "bool";
    case Tag::Int: return "int";
    case Tag::Float: return "float";
    case Tag::DTypeV: return "dtype";
    case Tag::Func:
    case Tag::Builtin: return "fn";
    case Tag::Str: return "str";
    case Tag::List: return "list";
    case Tag::Tensor: return "tensor";
  }
  return "?";
}

namespace {

// A new string of the bytes of `a` then `b`, in one allocation.
Value alloc_str(std::string_view a, std::string_view b) {
  const size_t n = a.size() + b.size();
  void* mem = ::operator new(sizeof(StrObj) + n + 1);
  auto* o = new (mem) StrObj();
  o->length = n;
  if (!a.empty()) std::memcpy(o->data(), a.data(), a.size());
  if (!b.empty()) std::memcpy(o->data() + a.size(), b.data(), b.size());
  o->data()[n] = '\0';
  return Value::adopt(o);
}

// The empty string and the 256 strings of one byte, made once per thread
// and shared: `s[i]` in a loop over a string allocates nothing, as in
// CPython (its one-character cache) and LuaJIT (interned strings). Strings
// are immutable, so sharing is invisible to scripts. Per thread, as the
// counts are not atomic: a VM's objects live on the thread that runs it.
struct ShortStrings {
  Value empty;
  Value byte[256];
};
thread_local ShortStrings short_strings;

Value short_str(std::string_view s) {
  Value& v = s.empty() ? short_strings.empty : short_strings.byte[static_cast<unsigned char>(s[0])];
  if (v.is_nil()) v = alloc_str(s, {});
  return v;
}

}  // namespace

const Value* one_byte_strings() {
  thread_local const Value* all = [] {
    for (int b = 0; b < 256; ++b) {
      const char c = static_cast<char>(b);
      short_str(std::string_view(&c, 1));
    }
    return short_strings.byte;
  }();
  return all;
}

Value make_str(std::string_view s) { return s.size() <= 1 ? short_str(s) : alloc_str(s, {}); }

const Value& type_name_str(const Value& v) {
  // One string per tag, made once per thread (as the short strings above).
  thread_local Value names[static_cast<size_t>(Tag::Tensor) + 1];
  Value& name = names[static_cast<size_t>(v.tag())];
  if (name.is_nil()) name = make_str(type_name(v));
  return name;
}

Value concat_str(std::string_view a, std::string_view b) {
  if (a.size() + b.size() <= 1) return short_str(a.empty() ? b : a);
  return alloc_str(a, b);
}

Value make_list(std::vector<Value> items) {
  ListHeap* heap = ListHeap::current();
  // A collection first (every live list is held by some Value here).
  if (heap && heap->due()) heap->collect();
  auto* l = new ListObj();
  l->items = std::move(items);
  Value v = Value::adopt(l);  // owned before add(), which may throw bad_alloc
  if (heap) heap->add(l);
  return v;
}

ListObj::~ListObj() {
  if (heap) heap->remove(this);
}

namespace {

void free_leaf(Obj* o) { delete o; }

}  // namespace

void free_object(Obj* o) {
  if (o->kind != ObjKind::List) {
    free_leaf(o);
    return;
  }
  // Lists: drop children ourselves so that nesting depth never becomes C++
  // recursion depth; lists whose count hits zero go on a work list.
  std::vector<ListObj*> pending;
  auto* cur = static_cast<ListObj*>(o);
  for (;;) {
    for (Value& v : cur->items) {
      if (!v.is_obj()) continue;
      Obj* child = v.detach();
      if (--child->refcount != 0) continue;
      if (child->kind == ObjKind::List)
        pending.push_back(static_cast<ListObj*>(child));
      else
        free_leaf(child);
    }
    delete cur;
    if (pending.empty()) break;
    cur = pending.back();
    pending.pop_back();
  }
}

}  // namespace tessera
