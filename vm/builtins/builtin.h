// Built-in functions: the calling convention and the registry.
//
// A built-in is a static, immutable BuiltinDef (the calling convention is
// vm/core/builtin_def.h). The set of built-ins is the concatenation of static
// tables (scalar built-ins in vm/builtins, tensor operations generated from
// the Graph IR op table in vm/graph); no mutable global state. The compiler
// asks `is_builtin_global` to resolve names, the VM asks
// `builtin_global_value` to fill global slots.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "vm/core/builtin_def.h"
#include "vm/core/value.h"

namespace tessera {

// Every built-in global: functions, plus the dtype constants f32 f16 bf16 i32
// i64 bool (which are dtype values, not functions).
bool is_builtin_global(std::string_view name);
// The value of a built-in global (a Builtin or DTypeV value). Precondition:
// is_builtin_global(name).
Value builtin_global_value(std::string_view name);

// The tables that make up the registry (each component owns one).
std::span<const BuiltinDef> scalar_builtins();  // vm/builtins/scalar_builtins.cpp
// (tensor_builtins(): vm/graph/op_table.h, generated from the op table)

// Shared argument-checking helpers for built-in implementations; each throws
// RuntimeError with a message naming the built-in, e.g. "len: expected str,
// list or tensor, got int".
[[noreturn]] void throw_arg_type(const char* fn, const char* expected, const Value& got);
int64_t arg_int(const char* fn, const Value& v);        // int only
double arg_number(const char* fn, const Value& v);      // int or float

// Added by vm/builtins: the arity and keyword checks every built-in shares,
// with the spec's messages: "len() takes 1 argument (2 given)",
// "fmt() takes 2 arguments (1 given)", "assert() takes 1 to 2 arguments
// (3 given)" (max_args -1 = variadic), and, unless accepts_kwargs,
// "print() does not take keyword arguments".
void check_arity(const char* fn, const CallArgs& args, int min_args, int max_args,
                 bool accepts_kwargs);
// The message of a call with `given` arguments where `min_args` to `max_args`
// are taken (check_arity's; the interpreter's for functions too).
std::string arity_message(const char* fn, int min_args, int max_args, int given);

}  // namespace tessera
