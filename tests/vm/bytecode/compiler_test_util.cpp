#include "compiler_test_util.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "vm/bytecode/disassembler.h"
#include "vm/frontend/parser.h"

namespace tessera::test {

std::unique_ptr<Module> compile_src(const std::string& src) {
  static const std::set<std::string, std::less<>> kBuiltins = {"print", "len", "zeros",
                                                                "f32",   "sum", "assert"};
  CompileOptions opts;
  opts.is_builtin = [](std::string_view n) { return kBuiltins.count(n) > 0; };
  return compile(parse("t.tsb", src), opts);
}

const FunctionProto& fn(const Module& m, const std::string& name) {
  for (const auto& f : m.functions)
    if (f->name == name) return *f;
  ADD_FAILURE() << "no function " << name;
  return *m.functions.front();
}

std::vector<std::string> ops(const Module& m, const std::string& name) {
  // Instruction lines look like "  <pc> <line>  OP  operands ; comment".
  std::istringstream in(disassemble_function(m, fn(m, name)));
  std::vector<std::string> out;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (line.rfind("  constants:", 0) == 0 || line.rfind("  locals:", 0) == 0) break;
    std::istringstream fields(line);
    std::string pc, ln, op, word, rest;
    fields >> pc >> ln >> op;
    rest = op;
    while (fields >> word && word != ";") rest += " " + word;
    out.push_back(rest);
  }
  return out;
}

std::vector<std::string> opnames(const Module& m, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& in : fn(m, name).code) out.push_back(op_info(in.op).name);
  return out;
}

}  // namespace tessera::test
