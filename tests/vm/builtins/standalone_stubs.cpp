// Stand-ins for the other components, linked ONLY into value_ops_test so the
// vm/builtins unit tests build and run while tensor/graph/interp are being
// written. builtins_test links the real libraries instead.
#include <iostream>

#include "vm/builtins/builtin.h"
#include "vm/core/error.h"
#include "vm/graph/op_table.h"  // tensor_builtins()
#include "vm/interp/vm.h"
#include "vm/tensor/tensor_api.h"

namespace tessera {

VM::VM(VMOptions opts) : opts_(std::move(opts)) {}
VM::~VM() = default;
void VM::SessionDeleter::operator()(Interpreter*) const {}  // no sessions here
std::ostream& VM::out() { return opts_.out != nullptr ? *opts_.out : std::cout; }

std::span<const BuiltinDef> tensor_builtins() { return {}; }

Value tensor_binary(BinOp, const Value&, const Value&) { throw RuntimeError("stub"); }
Value tensor_compare(CmpOp, const Value&, const Value&) { throw RuntimeError("stub"); }
Value tensor_neg(const Value&) { throw RuntimeError("stub"); }
int64_t tensor_len(const Value&) { throw RuntimeError("stub"); }
void format_tensor(std::string&, const Value&) { throw RuntimeError("stub"); }

}  // namespace tessera
