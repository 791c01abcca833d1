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

Value make_str(std::string_view s) {
  void* mem = ::operator new(sizeof(StrObj) + s.size() + 1);
  auto* o = new (mem) StrObj();
  o->length = s.size();
  if (!s.empty()) std::memcpy(o->data(), s.data(), s.size());
  o->data()[s.size()] = '\0';
  return Value::adopt(o);
}

Value make_list(std::vector<Value> items) {
  ListHeap* heap = ListHeap::current();
  // A collection first (every live list is held by some Value here).
  if (heap && heap->due()) heap->collect();
  auto* l = new ListObj();
  l->items = std::move(items);
  if (heap) heap->add(l);
  return Value::adopt(l);
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
