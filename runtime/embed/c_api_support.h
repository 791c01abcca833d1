// What every C ABI function (c_api_*.cpp) shares: the VM check, the
// exception barrier, and handle lookups with their messages.
#pragma once

#include <cstring>
#include <iterator>
#include <new>
#include <stdexcept>
#include <string>

#include "runtime/embed/embedded_vm.h"
#include "vm/core/error.h"

namespace tessera::embed {

// An enum argument's value as the C host passed it: any int (C enums are
// ints), read without a C++ enum load, whose range a C host need not keep.
template <class E>
int raw_enum(const E& e) {
  int raw;
  static_assert(sizeof raw == sizeof e);
  std::memcpy(&raw, &e, sizeof raw);
  return raw;
}

// The statuses' names, by value; a value outside them is no tsr_status (a C
// host may return any int).
inline constexpr const char* kStatusNames[] = {"TSR_SUCCESS", "TSR_EINVAL",  "TSR_ERUNTIME", "TSR_ESYNTAX",
                                               "TSR_EOOM",    "TSR_ETYPE",   "TSR_ENOTFOUND", "TSR_EIO",
                                               "TSR_EVERSION", "TSR_EBUSY",  "TSR_ERANGE",   "TSR_EDEVICE"};
static_assert(std::size(kStatusNames) == TSR_EDEVICE + 1, "a status of tessera.h has no name here");
inline bool known_status(int raw) { return raw >= 0 && static_cast<size_t>(raw) < std::size(kStatusNames); }

// Runs `body(vm)` for a live VM; no exception leaves (an ABI boundary).
template <class F>
tsr_status with_vm(tsr_vm* vm, F&& body) {
  if (!vm_is_live(vm)) {
    thread_last_error() = vm ? "the VM was destroyed (or is not a tsr_vm)" : "the VM is NULL";
    return TSR_EINVAL;
  }
  try {
    // Lists the host makes join the VM's heap (its cycle collector).
    ListHeapScope lists(&vm->vm->list_heap());
    return body(*vm);
  } catch (const std::bad_alloc&) {
    return vm->fail(TSR_EOOM, "out of memory");
  } catch (const RuntimeError& e) {
    const std::string what = e.what();
    return vm->fail(what == "out of memory" ? TSR_EOOM : TSR_ERUNTIME, what);
  } catch (const std::exception& e) {
    return vm->fail(TSR_EINVAL, e.what());
  } catch (...) {
    return vm->fail(TSR_EINVAL, "unknown error");
  }
}

// The value of handle `v`, or null with the VM's error set.
inline Value* lookup(tsr_vm& vm, tsr_value v, const char* what = "value") {
  Value* p = vm.handles.get(v.id);
  if (!p)
    vm.fail(TSR_EINVAL, std::string("the ") + what +
                            " handle is not live in this VM (zero, freed, or another VM's)");
  return p;
}

inline tsr_status null_argument(tsr_vm& vm, const char* name) {
  return vm.fail(TSR_EINVAL, std::string("argument '") + name + "' is NULL");
}

inline tsr_status wrong_type(tsr_vm& vm, const char* expected, const Value& got) {
  return vm.fail(TSR_ETYPE, std::string("expected ") + expected + ", got " + type_name(got));
}

// Stores a new handle for `v` in *out.
inline tsr_status give(tsr_vm& vm, Value v, tsr_value* out) {
  out->id = vm.handles.add(std::move(v));
  return vm.ok();
}

}  // namespace tessera::embed
