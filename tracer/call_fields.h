// The kind-specific fields of a CALL line in the IR text form (tracer/ir_text.cpp):
// `sub ptr [aux=] [kw=]`, read from and made into a CallTarget's alternative.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "tracer/trace_ir.h"

namespace tessera::jit {

// The CALL line's kind-specific fields (`sub ptr aux= kw=`): what each kind
// has of them, zero or empty where it has none.
struct CallFields {
  uint8_t sub = 0;
  const void* ptr = nullptr;
  const void* aux = nullptr;
  std::vector<std::string> kw;
};

// What call target `c` prints in those fields.
CallFields call_fields(const CallTarget& c);

// The call target of kind `kind` with fields `f`, or the name of a field
// that is set but which the kind does not have.
std::variant<CallTarget::What, const char*> make_call(CallTarget::Kind kind, CallFields f);

}  // namespace tessera::jit
