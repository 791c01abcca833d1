// The module's global slots and how names map to them.
//
// Globals are the names declared by a `let` directly at file level, every
// `fn`, and the built-ins. User declarations are registered first (before any
// code is compiled, which is what makes functions hoisted and lets visible
// to functions defined above them); built-in and unknown names get a slot on
// first use. A user declaration of a built-in's name replaces the built-in.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vm/bytecode/bytecode.h"

namespace tessera {

class GlobalTable {
 public:
  GlobalTable(Module& module, std::function<bool(std::string_view)> is_builtin)
      : module_(module), is_builtin_(std::move(is_builtin)) {}

  // Takes over the global slots of a session's earlier module, in order, as
  // GlobalInit::Kept (CompileOptions::session). Call before anything else.
  void continue_session(const Module& session);

  // Registers a top-level `fn`: the slot starts out holding the function.
  // A later `fn` of the same name wins (as rebinding would).
  void declare_function(const std::string& name, FunctionProto* proto);
  // Registers a top-level `let`: the slot starts out undefined.
  void declare_variable(const std::string& name);

  // Slot to read `name` from. A name that is not a global at all still gets
  // a (never defined) slot, so that reading it is a runtime error only if the
  // read actually executes.
  uint32_t slot_for_read(const std::string& name);
  // Slot to assign `name` to, or nullopt if no global of that name exists.
  std::optional<uint32_t> slot_for_write(const std::string& name);

 private:
  std::optional<uint32_t> find(const std::string& name) const;
  uint32_t add_slot(const std::string& name, Module::GlobalInit init, bool declared);

  Module& module_;
  std::function<bool(std::string_view)> is_builtin_;
  std::unordered_map<std::string, uint32_t> slots_;
};

}  // namespace tessera
