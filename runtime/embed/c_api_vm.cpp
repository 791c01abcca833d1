// The C ABI (include/tessera/tessera.h): versions, the VM's lifecycle,
// running sources, globals, calls and host functions.
#include <chrono>
#include <cstring>

#include "runtime/embed/c_api_support.h"
#include "runtime/embed/host_function.h"
#include "vm/builtins/builtin.h"
#include "vm/frontend/lexer.h"
#include "vm/interp/interpreter.h"

using namespace tessera;
using namespace tessera::embed;

namespace {

tsr_status busy(tsr_vm& vm) {
  return vm.fail(TSR_EBUSY, "the VM is running a host function: it cannot run or call script code until it returns");
}

tsr_status run_source(tsr_vm& vm, const std::string& name, const std::string& source) {
  if (vm.in_host_function) return busy(vm);
  vm.start();
  return vm.from_run(vm.vm->run_source(name, source));
}

tsr_status call_value(tsr_vm& vm, const Value& callee, const tsr_value* args, size_t n, tsr_value* result) {
  if (vm.in_host_function) return busy(vm);
  if (n != 0 && !args) return null_argument(vm, "args");
  vm.call_args.clear();
  for (size_t i = 0; i < n; ++i) {
    Value* a = lookup(vm, args[i], "argument");
    if (!a) return TSR_EINVAL;
    vm.call_args.push_back(*a);
  }
  if (!callee.is_callable()) return wrong_type(vm, "a function", callee);
  vm.start();
  ++vm.counters.host_calls;
  Value r;
  const RunStatus st = vm.vm->call(callee, vm.call_args, r);
  vm.call_args.clear();
  if (st != RunStatus::Ok) return vm.from_run(st);
  if (result) result->id = vm.handles.add(std::move(r));
  return vm.ok();
}

}  // namespace

extern "C" {

uint32_t tsr_abi_version(void) { return (uint32_t{TSR_ABI_MAJOR} << 16) | TSR_ABI_MINOR; }

const char* tsr_version_string(void) { return TESSERA_VERSION; }

const char* tsr_status_name(tsr_status status) {
  const int i = raw_enum(status);
  return known_status(i) ? kStatusNames[i] : "TSR_UNKNOWN";
}

tsr_status tsr_vm_create(const tsr_vm_options* opts, tsr_vm** out) {
  std::string& err = thread_last_error();
  err.clear();
  if (!out) {
    err = "argument 'out' is NULL";
    return TSR_EINVAL;
  }
  *out = nullptr;
  tsr_vm_options defaults;
  tsr_vm_options_init(&defaults);
  if (!opts) opts = &defaults;
  if (opts->abi_major != TSR_ABI_MAJOR || opts->abi_minor > TSR_ABI_MINOR) {
    err = "the host was built against the Tessera ABI " + std::to_string(opts->abi_major) + "." +
          std::to_string(opts->abi_minor) + ", this library is " + std::to_string(TSR_ABI_MAJOR) + "." +
          std::to_string(TSR_ABI_MINOR) +
          " (a different major version, or a newer minor one): rebuild the host against this library's tessera.h"
          " (or were the options not set with tsr_vm_options_init?)";
    return TSR_EVERSION;
  }
  if (opts->struct_size < sizeof(tsr_vm_options)) {
    err = "tsr_vm_options.struct_size is " + std::to_string(opts->struct_size) + ", expected " +
          std::to_string(sizeof(tsr_vm_options)) + ": set the options with tsr_vm_options_init";
    return TSR_EVERSION;
  }
  if (opts->n_jit_params != 0 && !opts->jit_params) {
    err = "tsr_vm_options.jit_params is NULL but n_jit_params is " + std::to_string(opts->n_jit_params);
    return TSR_EINVAL;
  }
  if (opts->max_depth < 0 || opts->max_depth > 1000000) {
    err = "tsr_vm_options.max_depth must be 0 (the default, 10000) to 1000000, got " + std::to_string(opts->max_depth);
    return TSR_EINVAL;
  }
  try {
    auto vm = std::make_unique<tsr_vm>(*opts, next_vm_tag());
    for (size_t i = 0; i < opts->n_jit_params; ++i) {
      if (!opts->jit_params[i]) {
        err = "tsr_vm_options.jit_params[" + std::to_string(i) + "] is NULL";
        return TSR_EINVAL;
      }
      try {
        vm->params.set(opts->jit_params[i]);
      } catch (const std::invalid_argument& e) {
        err = e.what();
        return TSR_EINVAL;
      }
    }
    const char* device_name = opts->device ? opts->device : "auto";
    auto choice = device::parse_device_choice(device_name);
    if (!choice) {
      err = std::string("unknown device '") + device_name + "' (known: auto, cpu, gpu)";
      return TSR_EINVAL;
    }
    try {
      vm->device = device::select_device(*choice);
    } catch (const std::exception& e) {
      err = std::string("device '") + device_name + "': " + e.what();
      return TSR_EDEVICE;
    }
    vm_register(vm.get());
    *out = vm.release();
    return TSR_SUCCESS;
  } catch (const std::bad_alloc&) {
    err = "out of memory";
    return TSR_EOOM;
  } catch (const std::exception& e) {
    err = e.what();
    return TSR_EINVAL;
  }
}

tsr_status tsr_vm_destroy(tsr_vm* vm) {
  if (!vm) return TSR_SUCCESS;
  if (!vm_is_live(vm)) {
    thread_last_error() = "the VM was destroyed already (or is not a tsr_vm)";
    return TSR_EINVAL;
  }
  if (vm->in_host_function) return busy(*vm);
  vm_unregister(vm);
  delete vm;
  return TSR_SUCCESS;
}

const char* tsr_last_error(const tsr_vm* vm) {
  if (!vm_is_live(vm)) return thread_last_error().c_str();
  return vm->last_error.c_str();
}

const char* tsr_last_traceback(const tsr_vm* vm) {
  if (!vm_is_live(vm)) return "";
  return vm->last_traceback.c_str();
}

tsr_status tsr_run_source(tsr_vm* vm, const char* name, const char* source, size_t len) {
  return with_vm(vm, [&](tsr_vm& v) {
    if (!source && len != 0) return null_argument(v, "source");
    return run_source(v, name ? name : "<string>", std::string(source ? source : "", len));
  });
}

tsr_status tsr_run_file(tsr_vm* vm, const char* path) {
  return with_vm(vm, [&](tsr_vm& v) {
    if (!path) return null_argument(v, "path");
    std::string source;
    if (std::optional<SourceReadError> error = read_source_file(path, source))
      return v.fail(error->missing ? TSR_ENOTFOUND : TSR_EIO, "cannot " + error->what);
    return run_source(v, path, std::move(source));
  });
}

tsr_status tsr_get_global(tsr_vm* vm, const char* name, tsr_value* out) {
  return with_vm(vm, [&](tsr_vm& v) {
    if (!name) return null_argument(v, "name");
    if (!out) return null_argument(v, "out");
    out->id = 0;
    Interpreter& s = *v.vm->session();
    if (auto slot = s.find_global(name)) return give(v, s.global(*slot), out);
    if (is_builtin_global(name)) return give(v, builtin_global_value(name), out);
    return v.fail(TSR_ENOTFOUND, std::string("name '") + name + "' is not defined");
  });
}

tsr_status tsr_set_global(tsr_vm* vm, const char* name, tsr_value value) {
  return with_vm(vm, [&](tsr_vm& v) {
    if (!name) return null_argument(v, "name");
    if (!is_identifier(name))
      return v.fail(TSR_EINVAL, std::string("'") + name + "' is not a valid global name" +
                                    (is_keyword(name) ? " (it is a keyword)" : ""));
    Value* val = lookup(v, value);
    if (!val) return TSR_EINVAL;
    if (v.in_host_function) return busy(v);
    v.vm->session()->define_global(name, *val);
    return v.ok();
  });
}

tsr_status tsr_call(tsr_vm* vm, tsr_value fn, const tsr_value* args, size_t n, tsr_value* result) {
  return with_vm(vm, [&](tsr_vm& v) {
    if (result) result->id = 0;
    Value* callee = lookup(v, fn, "function");
    if (!callee) return TSR_EINVAL;
    const Value f = *callee;  // the handle may be freed by nobody else, but the table may grow
    return call_value(v, f, args, n, result);
  });
}

tsr_status tsr_call_global(tsr_vm* vm, const char* name, const tsr_value* args, size_t n, tsr_value* result) {
  return with_vm(vm, [&](tsr_vm& v) {
    if (result) result->id = 0;
    if (!name) return null_argument(v, "name");
    Interpreter& s = *v.vm->session();
    auto slot = s.find_global(name);
    if (slot) return call_value(v, s.global(*slot), args, n, result);
    if (is_builtin_global(name)) return call_value(v, builtin_global_value(name), args, n, result);
    return v.fail(TSR_ENOTFOUND, std::string("name '") + name + "' is not defined");
  });
}

tsr_status tsr_register_function(tsr_vm* vm, const char* name, tsr_host_fn fn, void* user, int min_args,
                                 int max_args) {
  return with_vm(vm, [&](tsr_vm& v) {
    if (!name) return null_argument(v, "name");
    if (!fn) return null_argument(v, "fn");
    if (!is_identifier(name))
      return v.fail(TSR_EINVAL, std::string("'") + name + "' is not a valid function name" +
                                    (is_keyword(name) ? " (it is a keyword)" : ""));
    if (min_args < 0 || max_args < -1 || (max_args >= 0 && max_args < min_args))
      return v.fail(TSR_EINVAL, "argument counts " + std::to_string(min_args) + ".." + std::to_string(max_args) +
                                    " are not a range (max_args -1: any number)");
    if (v.in_host_function) return busy(v);
    const BuiltinDef* def = add_host_function(v, name, fn, user, min_args, max_args);
    v.vm->session()->define_global(name, Value::builtin(def));
    return v.ok();
  });
}

tsr_status tsr_raise(tsr_vm* vm, const char* message) {
  return with_vm(vm, [&](tsr_vm& v) {
    v.raised = message ? message : "error raised by a host function";
    return v.fail(TSR_ERUNTIME, *v.raised);
  });
}

}  // extern "C"
