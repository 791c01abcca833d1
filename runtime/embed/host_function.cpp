#include "runtime/embed/host_function.h"

#include <cctype>

#include "runtime/embed/c_api_support.h"
#include "vm/core/error.h"
#include "vm/frontend/lexer.h"

namespace tessera::embed {

namespace {

Value host_trampoline(BuiltinContext& /*ctx*/, const CallArgs& args) {
  auto& hf = *static_cast<HostFunction*>(args.callee->host);
  tsr_vm& vm = *hf.vm;
  ++vm.counters.host_function_calls;
  // What the script printed so far comes before what the host writes.
  if (vm.out_stream) vm.out_stream->flush();
  // The arguments as handles the VM owns for the call (the host borrows them).
  constexpr size_t kInline = 8;
  tsr_value inline_handles[kInline];
  std::vector<tsr_value> many;
  tsr_value* handles = inline_handles;
  if (args.pos.size() > kInline) {
    many.resize(args.pos.size());
    handles = many.data();
  }
  for (size_t i = 0; i < args.pos.size(); ++i) handles[i].id = vm.handles.add(args.pos[i]);
  tsr_value result{0};
  vm.raised.reset();
  ++vm.in_host_function;
  tsr_status status;
  try {
    status = hf.fn(&vm, hf.user, handles, args.pos.size(), &result);
  } catch (...) {
    // A C++ host's exception must not unwind through the VM's frames.
    status = vm.fail(TSR_ERUNTIME, "the host function threw a C++ exception");
  }
  --vm.in_host_function;
  // The result first: it may be one of the argument handles.
  Value r;
  const bool has_result = result.id != 0 && vm.handles.take(result.id, r);
  for (size_t i = 0; i < args.pos.size(); ++i) vm.handles.remove(handles[i].id);
  // A status the enum does not have (a host's bug) is said to be one, before
  // anything is read of the result or the error it did not set.
  if (const int raw = raw_enum(status); !known_status(raw)) {
    vm.raised.reset();
    RuntimeError e("the host function returned status " + std::to_string(raw) +
                   ", which is not a tsr_status (TSR_SUCCESS or an error, 1 to " +
                   std::to_string(std::size(kStatusNames) - 1) + ")");
    e.native_function = hf.name;
    throw e;
  }
  if (status != TSR_SUCCESS) {
    std::string message = vm.raised ? *vm.raised
                                    : std::string(tsr_status_name(status)) +
                                          (vm.last_error.empty() ? "" : ": " + vm.last_error);
    vm.raised.reset();
    RuntimeError e(message);
    e.native_function = hf.name;
    throw e;
  }
  if (result.id != 0 && !has_result) {
    RuntimeError e("the host function's result is not a live handle of this VM");
    e.native_function = hf.name;
    throw e;
  }
  return r;
}

}  // namespace

const BuiltinDef* add_host_function(tsr_vm& vm, const std::string& name, tsr_host_fn fn, void* user,
                                    int min_args, int max_args) {
  HostFunction& hf = vm.host_functions.emplace_back();
  hf.name = name;
  hf.fn = fn;
  hf.user = user;
  hf.vm = &vm;
  hf.def = BuiltinDef{hf.name.c_str(), &host_trampoline, min_args, max_args, false, &hf};
  return &hf.def;
}

bool is_identifier(std::string_view name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return !is_keyword(name);
}

}  // namespace tessera::embed
