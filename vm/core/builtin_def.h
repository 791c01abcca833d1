// The calling convention of built-in functions: what a BuiltinDef is, how it
// is called (CallArgs), and what it may ask of the VM that calls it
// (BuiltinContext).
//
// It lives in vm/core, below every component that defines built-ins (the
// scalar ones in vm/builtins, the tensor ones generated in vm/graph) and below
// the interpreter that calls them. BuiltinContext is an interface declared
// here and implemented by vm/interp's VM, so that built-ins never include the
// interpreter. The registry of all built-ins is vm/builtins/builtin.h.
#pragma once

#include <exception>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vm/core/value.h"

namespace tessera {

struct BuiltinDef;
struct CallArgs;
class BuiltinContext;

// The outcome of a host function's call that a compiled trace made just
// before it exited (its result was not of the type the trace expected, or
// the function raised): the interpreter redoes the trace's last operation,
// and takes this outcome over instead of calling the host function twice.
// Only host functions (BuiltinDef::host) are replayed; the VM's own
// built-ins have no effects a second call would repeat.
struct CallReplay {
  const BuiltinDef* def = nullptr;  // null: nothing pending
  Value result;
  std::exception_ptr error;
  // The pending outcome if it is `bd`'s, else (dropping a stale one) a call.
  Value take_or_call(const BuiltinDef* bd, BuiltinContext& ctx, const CallArgs& args);
};

// What built-ins need from the VM running them (print's output stream,
// args()'s script arguments). Implemented by VM (vm/interp/vm.h).
class BuiltinContext {
 public:
  virtual std::ostream& out() = 0;
  virtual const std::vector<std::string>& script_args() const = 0;
  CallReplay replay;
  // A FatalRuntimeError a compiled trace's helper met (vm/core/error.h):
  // raised by the interpreter when the trace exits.
  std::string deferred_error;

 protected:
  ~BuiltinContext() = default;
};

// Arguments of one built-in call. Positional args in order; keyword args as
// parallel name/value arrays (names are the callee's keyword names as
// written by the script; unknown names are the built-in's error to raise).
struct CallArgs {
  const BuiltinDef* callee = nullptr;  // set by the callers; a host function finds its binding here
  std::span<const Value> pos;
  std::span<const Value> kw_values;
  const std::vector<Value>* kw_names = nullptr;  // list of str values, or null
  size_t kw_count() const { return kw_values.size(); }
  std::string_view kw_name(size_t i) const {
    if (kw_names == nullptr || i >= kw_names->size()) return {};
    const Value& n = (*kw_names)[i];
    return n.is_str() ? n.as_str()->view() : std::string_view{};
  }
};

// Built-ins raise errors by throwing RuntimeError (vm/core/error.h) with the
// message text after "runtime error: ", e.g. "pop from empty list".
using BuiltinFn = Value (*)(BuiltinContext& ctx, const CallArgs& args);

struct BuiltinDef {
  const char* name;
  BuiltinFn fn;
  int min_args;     // positional
  int max_args;     // positional; -1 = variadic
  bool accepts_kwargs;
  // A host function's binding (the embedding API), null for the VM's own
  // built-ins. Its effects are the host's: a trace's call of it is never
  // repeated (CallReplay).
  void* host = nullptr;
};

inline Value CallReplay::take_or_call(const BuiltinDef* bd, BuiltinContext& ctx, const CallArgs& args) {
  if (def != bd) {
    def = nullptr;
    error = nullptr;
    result = Value();
    return bd->fn(ctx, args);
  }
  def = nullptr;
  if (error) {
    std::exception_ptr e = std::move(error);
    error = nullptr;
    std::rethrow_exception(e);
  }
  return std::move(result);
}

}  // namespace tessera
