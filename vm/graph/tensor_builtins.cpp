// The tensor built-ins: one BuiltinDef per op-table row marked builtin.
#include <vector>

#include "vm/core/builtin_def.h"
#include "vm/graph/op_table.h"

namespace tessera {

namespace {

// One entry point per op so that a BuiltinFn (a plain function pointer)
// knows which row it serves.
template <OpId Id>
Value op_entry(BuiltinContext&, const CallArgs& args) {
  return call_op(op_def(Id), args);
}

struct EntryRow {
  OpId id;
  BuiltinFn fn;
};

constexpr EntryRow kEntries[] = {
#define TESSERA_OP(id, ...) EntryRow{OpId::id, &op_entry<OpId::id>},
#include "vm/graph/ops.def"
#undef TESSERA_OP
};

std::vector<BuiltinDef> build_table() {
  std::vector<BuiltinDef> out;
  for (const EntryRow& e : kEntries) {
    const OpDef& d = op_def(e.id);
    if (!d.builtin) continue;
    // Attributes may also be passed positionally after the inputs.
    out.push_back(BuiltinDef{d.name, e.fn, d.min_inputs, d.max_inputs + static_cast<int>(d.attrs.size()),
                             !d.attrs.empty()});
  }
  return out;
}

}  // namespace

std::span<const BuiltinDef> tensor_builtins() {
  // Built once (thread-safe static init) and immutable afterwards.
  static const std::vector<BuiltinDef> table = build_table();
  return table;
}

}  // namespace tessera
