#include "vm/interp/vm.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "vm/builtins/builtin.h"
#include "vm/bytecode/compiler.h"
#include "vm/bytecode/disassembler.h"
#include "vm/core/error.h"
#include "vm/frontend/parser.h"
#include "vm/interp/interpreter.h"

namespace tessera {

namespace {

// The source line `line` (1-based) of `source`, without its newline.
std::string_view source_line(std::string_view source, int line) {
  size_t pos = 0;
  for (int l = 1; l < line; ++l) {
    pos = source.find('\n', pos);
    if (pos == std::string_view::npos) return {};
    ++pos;
  }
  size_t end = source.find('\n', pos);
  std::string_view s = source.substr(pos, end == std::string_view::npos ? end : end - pos);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

// Traceback lines as the spec (§1) fixes them: innermost last; past 20
// frames the outermost 10 and the innermost 10 around an "omitted" line.
void print_traceback(std::ostream& os, const std::string& file, const ScriptError& e) {
  const auto& tb = e.traceback;
  const size_t n = tb.size();
  auto frame_line = [&](const ScriptError::Frame& f) {
    os << "  at " << f.function << " (" << file << ":" << f.line << ")\n";
  };
  if (n <= 20) {
    for (const auto& f : tb) frame_line(f);
    return;
  }
  for (size_t i = 0; i < 10; ++i) frame_line(tb[i]);
  os << "  ... " << (n - 20) << " frames omitted\n";
  for (size_t i = n - 10; i < n; ++i) frame_line(tb[i]);
}

}  // namespace

VM::VM(VMOptions opts) : opts_(std::move(opts)) {}
VM::~VM() = default;

std::ostream& VM::out() { return opts_.out ? *opts_.out : std::cout; }
std::ostream& VM::err() { return opts_.err ? *opts_.err : std::cerr; }

std::unique_ptr<Module> VM::compile_source(const std::string& filename,
                                           const std::string& source) {
  try {
    ast::Program program = parse(filename, source);
    CompileOptions copts;
    copts.is_builtin = [](std::string_view name) { return is_builtin_global(name); };
    return compile(program, copts);
  } catch (const SyntaxError& e) {
    out().flush();
    std::ostream& os = err();
    os << filename << ":" << e.line << ":" << e.col << ": syntax error: " << e.what() << "\n";
    std::string_view line = source_line(source, e.line);
    if (!line.empty() && e.col >= 1 && static_cast<size_t>(e.col) <= line.size() + 1) {
      os << "  " << line << "\n  ";
      // Keep tabs so the caret lines up under the offending column.
      for (int i = 0; i + 1 < e.col; ++i) os << (line[static_cast<size_t>(i)] == '\t' ? '\t' : ' ');
      os << "^\n";
    }
    return nullptr;
  }
}

RunStatus VM::run_source(const std::string& filename, const std::string& source) {
  std::unique_ptr<Module> module = compile_source(filename, source);
  if (!module) return RunStatus::CompileError;
  Interpreter interp(*this, std::move(module));
  if (jit_hooks_) interp.set_jit_hooks(jit_hooks_);
  ScriptError error;
  bool ok = interp.run_main(error);
  out().flush();
  if (ok) return RunStatus::Ok;
  std::ostream& os = err();
  int line = error.traceback.empty() ? 0 : error.traceback.back().line;
  os << filename << ":" << line << ": runtime error: " << error.message << "\n";
  print_traceback(os, filename, error);
  os.flush();
  return RunStatus::RuntimeError;
}

bool VM::read_file(const std::string& path, std::string& source) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    err() << "tessera-vm: cannot open '" << path << "': Is a directory\n";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err() << "tessera-vm: cannot open '" << path << "': " << std::strerror(errno) << "\n";
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    err() << "tessera-vm: cannot read '" << path << "'\n";
    return false;
  }
  source = std::move(ss).str();
  return true;
}

RunStatus VM::run_file(const std::string& path) {
  std::string source;
  if (!read_file(path, source)) return RunStatus::CompileError;
  return run_source(path, source);
}

RunStatus VM::disassemble_file(const std::string& path) {
  std::string source;
  if (!read_file(path, source)) return RunStatus::CompileError;
  std::unique_ptr<Module> module = compile_source(path, source);
  if (!module) return RunStatus::CompileError;
  out() << disassemble(*module);
  out().flush();
  return RunStatus::Ok;
}

}  // namespace tessera
