// Host functions: C callbacks (tsr_host_fn) that scripts call as built-ins.
//
// Each registration makes a HostFunction whose BuiltinDef points back at it
// (BuiltinDef::host); its `fn` is one trampoline that turns the arguments
// into handles the VM owns for the call, calls the host, takes its result
// handle over, and turns a failure into a RuntimeError that names the host
// function (the traceback's innermost frame). A rebinding registers anew:
// the old binding stays alive, since values and compiled traces may still
// point at it.
#pragma once

#include <string_view>

#include "runtime/embed/embedded_vm.h"

namespace tessera::embed {

const BuiltinDef* add_host_function(tsr_vm& vm, const std::string& name, tsr_host_fn fn, void* user,
                                    int min_args, int max_args);

// A name a script can use: [A-Za-z_][A-Za-z0-9_]*, and not a keyword.
bool is_identifier(std::string_view name);

}  // namespace tessera::embed
