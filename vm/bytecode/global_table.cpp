#include "vm/bytecode/global_table.h"

namespace tessera {

std::optional<uint32_t> GlobalTable::find(const std::string& name) const {
  auto it = slots_.find(name);
  if (it == slots_.end()) return std::nullopt;
  return it->second;
}

uint32_t GlobalTable::add_slot(const std::string& name, Module::GlobalInit init, bool declared) {
  auto slot = static_cast<uint32_t>(module_.global_names.size());
  module_.global_names.push_back(name);
  module_.global_slots.push_back({init, nullptr, declared});
  slots_.emplace(name, slot);
  return slot;
}

void GlobalTable::continue_session(const Module& session) {
  for (size_t i = 0; i < session.global_names.size(); ++i)
    add_slot(session.global_names[i], Module::GlobalInit::Kept, session.global_slots[i].declared);
}

void GlobalTable::declare_function(const std::string& name, FunctionProto* proto) {
  auto slot = find(name);
  if (!slot) slot = add_slot(name, Module::GlobalInit::Function, true);
  module_.global_slots[*slot] = {Module::GlobalInit::Function, proto, true};
}

void GlobalTable::declare_variable(const std::string& name) {
  // A name that is also a `fn` keeps the function as its initial value; the
  // `let` redefines it when it runs.
  // A name an earlier source of the session only read becomes declared.
  if (auto slot = find(name)) module_.global_slots[*slot].declared = true;
  else add_slot(name, Module::GlobalInit::Undefined, true);
}

uint32_t GlobalTable::slot_for_read(const std::string& name) {
  if (auto slot = find(name)) return *slot;
  if (is_builtin_ && is_builtin_(name)) return add_slot(name, Module::GlobalInit::Builtin, true);
  return add_slot(name, Module::GlobalInit::Undefined, false);
}

std::optional<uint32_t> GlobalTable::slot_for_write(const std::string& name) {
  if (auto slot = find(name)) {
    if (module_.global_slots[*slot].declared) return slot;
    return std::nullopt;
  }
  if (is_builtin_ && is_builtin_(name)) return add_slot(name, Module::GlobalInit::Builtin, true);
  return std::nullopt;
}

}  // namespace tessera
