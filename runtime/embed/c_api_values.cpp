// The C ABI (include/tessera/tessera.h): value handles, scalars, strings
// and lists.
#include "runtime/embed/c_api_support.h"
#include "vm/builtins/value_format.h"

using namespace tessera;
using namespace tessera::embed;

namespace {

// Looks up `v`, checks `out`, and runs body(value) for the accessors.
template <class F>
tsr_status with_value(tsr_vm* vm, tsr_value v, const void* out, F&& body) {
  return with_vm(vm, [&](tsr_vm& m) {
    if (!out) return null_argument(m, "out");
    Value* val = lookup(m, v);
    if (!val) return TSR_EINVAL;
    return body(m, *val);
  });
}

template <class F>
tsr_status make(tsr_vm* vm, tsr_value* out, F&& build) {
  return with_vm(vm, [&](tsr_vm& m) {
    if (!out) return null_argument(m, "out");
    out->id = 0;
    return give(m, build(), out);
  });
}

tsr_status list_of(tsr_vm& m, tsr_value list, ListObj*& out) {
  Value* v = lookup(m, list, "list");
  if (!v) return TSR_EINVAL;
  if (!v->is_list()) return wrong_type(m, "list", *v);
  out = v->as_list();
  return TSR_SUCCESS;
}

tsr_status index_error(tsr_vm& m, size_t i, size_t n) {
  return m.fail(TSR_ERANGE, "list index " + std::to_string(i) + " out of range (length " + std::to_string(n) + ")");
}

}  // namespace

extern "C" {

tsr_status tsr_value_free(tsr_vm* vm, tsr_value v) {
  return with_vm(vm, [&](tsr_vm& m) {
    if (v.id == 0) return m.ok();
    if (!m.handles.remove(v.id))
      return m.fail(TSR_EINVAL, "the value handle is not live in this VM (zero, freed already, or another VM's)");
    return m.ok();
  });
}

tsr_status tsr_value_dup(tsr_vm* vm, tsr_value v, tsr_value* out) {
  return with_value(vm, v, out, [&](tsr_vm& m, const Value& val) { return give(m, val, out); });
}

tsr_status tsr_value_type(tsr_vm* vm, tsr_value v, tsr_type* out) {
  return with_value(vm, v, out, [&](tsr_vm& m, const Value& val) {
    switch (val.tag()) {
      case Tag::Undef:
      case Tag::Nil: *out = TSR_TYPE_NIL; break;
      case Tag::Bool: *out = TSR_TYPE_BOOL; break;
      case Tag::Int: *out = TSR_TYPE_INT; break;
      case Tag::Float: *out = TSR_TYPE_FLOAT; break;
      case Tag::DTypeV: *out = TSR_TYPE_DTYPE; break;
      case Tag::Func:
      case Tag::Builtin: *out = TSR_TYPE_FUNCTION; break;
      case Tag::Str: *out = TSR_TYPE_STR; break;
      case Tag::List: *out = TSR_TYPE_LIST; break;
      case Tag::Tensor: *out = TSR_TYPE_TENSOR; break;
    }
    return m.ok();
  });
}

tsr_status tsr_value_to_str(tsr_vm* vm, tsr_value v, tsr_value* out) {
  return with_value(vm, v, out, [&](tsr_vm& m, const Value& val) {
    Value s = val.is_str() ? val : make_str(format_value(val));
    return give(m, std::move(s), out);
  });
}

tsr_status tsr_new_nil(tsr_vm* vm, tsr_value* out) {
  return make(vm, out, [] { return Value::nil(); });
}
tsr_status tsr_new_bool(tsr_vm* vm, int b, tsr_value* out) {
  return make(vm, out, [&] { return Value::boolean(b != 0); });
}
tsr_status tsr_new_int(tsr_vm* vm, int64_t i, tsr_value* out) {
  return make(vm, out, [&] { return Value::integer(i); });
}
tsr_status tsr_new_float(tsr_vm* vm, double f, tsr_value* out) {
  return make(vm, out, [&] { return Value::number(f); });
}

tsr_status tsr_new_str(tsr_vm* vm, const char* data, size_t len, tsr_value* out) {
  return with_vm(vm, [&](tsr_vm& m) {
    if (!out) return null_argument(m, "out");
    out->id = 0;
    if (!data && len != 0) return null_argument(m, "data");
    return give(m, make_str(std::string_view(data ? data : "", len)), out);
  });
}

tsr_status tsr_new_list(tsr_vm* vm, const tsr_value* items, size_t n, tsr_value* out) {
  return with_vm(vm, [&](tsr_vm& m) {
    if (!out) return null_argument(m, "out");
    out->id = 0;
    if (!items && n != 0) return null_argument(m, "items");
    std::vector<Value> values;
    values.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      Value* v = lookup(m, items[i], "item");
      if (!v) return TSR_EINVAL;
      values.push_back(*v);
    }
    return give(m, make_list(std::move(values)), out);
  });
}

tsr_status tsr_get_bool(tsr_vm* vm, tsr_value v, int* out) {
  return with_value(vm, v, out, [&](tsr_vm& m, const Value& val) {
    if (!val.is_bool()) return wrong_type(m, "bool", val);
    *out = val.as_bool() ? 1 : 0;
    return m.ok();
  });
}

tsr_status tsr_get_int(tsr_vm* vm, tsr_value v, int64_t* out) {
  return with_value(vm, v, out, [&](tsr_vm& m, const Value& val) {
    if (!val.is_int()) return wrong_type(m, "int", val);
    *out = val.as_int();
    return m.ok();
  });
}

tsr_status tsr_get_float(tsr_vm* vm, tsr_value v, double* out) {
  return with_value(vm, v, out, [&](tsr_vm& m, const Value& val) {
    if (!val.is_number()) return wrong_type(m, "float or int", val);
    *out = val.to_double();
    return m.ok();
  });
}

tsr_status tsr_get_str(tsr_vm* vm, tsr_value v, const char** data, size_t* len) {
  return with_value(vm, v, data, [&](tsr_vm& m, const Value& val) {
    if (!val.is_str()) return wrong_type(m, "str", val);
    // make_str ends every string's bytes with a NUL (value.cpp).
    *data = val.as_str()->data();
    if (len) *len = val.as_str()->length;
    return m.ok();
  });
}

tsr_status tsr_list_len(tsr_vm* vm, tsr_value list, size_t* out) {
  return with_vm(vm, [&](tsr_vm& m) {
    if (!out) return null_argument(m, "out");
    ListObj* l = nullptr;
    if (tsr_status st = list_of(m, list, l)) return st;
    *out = l->items.size();
    return m.ok();
  });
}

tsr_status tsr_list_get(tsr_vm* vm, tsr_value list, size_t i, tsr_value* out) {
  return with_vm(vm, [&](tsr_vm& m) {
    if (!out) return null_argument(m, "out");
    out->id = 0;
    ListObj* l = nullptr;
    if (tsr_status st = list_of(m, list, l)) return st;
    if (i >= l->items.size()) return index_error(m, i, l->items.size());
    return give(m, l->items[i], out);
  });
}

tsr_status tsr_list_set(tsr_vm* vm, tsr_value list, size_t i, tsr_value item) {
  return with_vm(vm, [&](tsr_vm& m) {
    ListObj* l = nullptr;
    if (tsr_status st = list_of(m, list, l)) return st;
    Value* v = lookup(m, item, "item");
    if (!v) return TSR_EINVAL;
    if (i >= l->items.size()) return index_error(m, i, l->items.size());
    l->items[i] = *v;
    return m.ok();
  });
}

tsr_status tsr_list_push(tsr_vm* vm, tsr_value list, tsr_value item) {
  return with_vm(vm, [&](tsr_vm& m) {
    ListObj* l = nullptr;
    if (tsr_status st = list_of(m, list, l)) return st;
    Value* v = lookup(m, item, "item");
    if (!v) return TSR_EINVAL;
    l->items.push_back(*v);
    return m.ok();
  });
}

}  // extern "C"
