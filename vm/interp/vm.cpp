#include "vm/interp/vm.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <sstream>

#include "vm/builtins/builtin.h"
#include "vm/bytecode/compiler.h"
#include "vm/bytecode/disassembler.h"
#include "vm/core/error.h"
#include "vm/frontend/parser.h"
#include "vm/interp/interpreter.h"
#include "vm/interp/source_echo.h"

namespace tessera {

namespace {

}  // namespace

// Traceback lines as the spec (§1) fixes them: innermost last; past 20
// frames the outermost 10 and the innermost 10 around an "omitted" line.
std::string format_traceback(const std::string& file, const ScriptError& e) {
  std::ostringstream os;
  const auto& tb = e.traceback;
  const size_t n = tb.size();
  auto frame_line = [&](const ScriptError::Frame& f) {
    if (f.host) os << "  at " << f.function << " (host function)\n";
    else os << "  at " << f.function << " (" << (f.file.empty() ? file : f.file) << ":" << f.line << ")\n";
  };
  if (n <= 20) {
    for (const auto& f : tb) frame_line(f);
    return std::move(os).str();
  }
  for (size_t i = 0; i < 10; ++i) frame_line(tb[i]);
  os << "  ... " << (n - 20) << " frames omitted\n";
  for (size_t i = n - 10; i < n; ++i) frame_line(tb[i]);
  return std::move(os).str();
}

VM::VM(VMOptions opts) : opts_(std::move(opts)) {}
VM::~VM() {
  ListHeapScope lists(&list_heap_);
  end_session();
}  // list_heap_ goes last, with the cycles the program left behind

void VM::SessionDeleter::operator()(Interpreter* interp) const { delete interp; }

void VM::end_session() { session_.reset(); }

Interpreter* VM::session() {
  if (!opts_.keep_session) return nullptr;
  if (!session_) {
    auto empty = std::make_unique<Module>();
    empty->filename = "<session>";
    auto main = std::make_unique<FunctionProto>();
    main->name = "<main>";
    main->code.push_back(Instr{});  // never run: a module's functions[0] must exist
    empty->functions.push_back(std::move(main));
    session_.reset(new Interpreter(*this, std::move(empty)));
    if (jit_hooks_) session_->set_jit_hooks(jit_hooks_);
  }
  return session_.get();
}

std::ostream& VM::out() { return opts_.out ? *opts_.out : std::cout; }
std::ostream& VM::err() { return opts_.err ? *opts_.err : std::cerr; }

std::unique_ptr<Module> VM::compile_source(const std::string& filename,
                                           const std::string& source) {
  try {
    ast::Program program = parse(filename, source);
    CompileOptions copts;
    copts.is_builtin = [](std::string_view name) { return is_builtin_global(name); };
    if (Interpreter* s = session()) copts.session = &s->module();
    std::unique_ptr<Module> module = compile(program, copts);
    module->source = source;  // for the source line under a runtime error
    return module;
  } catch (const SyntaxError& e) {
    out().flush();
    std::ostringstream os;
    os << filename << ":" << e.line << ":" << e.col << ": syntax error: " << e.what() << "\n";
    os << caret_echo(source_line(source, e.line), e.col, "  ");
    last_error_ = VMError{RunStatus::CompileError, e.what(), os.str(), {}};
    if (opts_.report_errors) err() << last_error_.report;
    return nullptr;
  }
}

RunStatus VM::report_runtime_error(const std::string& filename, const ScriptError& error) {
  out().flush();
  int line = 0;
  std::string where = filename, echo;
  for (auto it = error.traceback.rbegin(); it != error.traceback.rend(); ++it)
    if (!it->host) {
      line = it->line;
      if (!it->file.empty()) where = it->file;
      echo = caret_echo(it->source_line, it->col, "    ");
      break;
    }
  last_error_.kind = RunStatus::RuntimeError;
  last_error_.message = error.message;
  if (error.message == "out of memory" && !opts_.out_of_memory_note.empty())
    last_error_.message += " (" + opts_.out_of_memory_note + ")";
  last_error_.traceback = format_traceback(filename, error);
  last_error_.report = opts_.error_prefix + where + ":" + std::to_string(line) + ": runtime error: " + last_error_.message + "\n" +
                       last_error_.traceback + echo;
  if (opts_.report_errors) {
    err() << last_error_.report;
    err().flush();
  }
  return RunStatus::RuntimeError;
}

RunStatus VM::run_source(const std::string& filename, const std::string& source) {
  ListHeapScope lists(&list_heap_);
  last_error_ = {};
  if (Interpreter* s = session(); s && s->running()) {
    last_error_ = VMError{RunStatus::RuntimeError, "the VM is already running a script", {}, {}};
    last_error_.report = "runtime error: " + last_error_.message + "\n";
    return RunStatus::RuntimeError;
  }
  std::unique_ptr<Module> module = compile_source(filename, source);
  if (!module) return RunStatus::CompileError;
  ScriptError error;
  bool ok;
  if (Interpreter* s = session()) {
    s->load(std::move(module));
    ok = s->run_main(error);
  } else {
    auto interp = std::make_unique<Interpreter>(*this, std::move(module));
    if (jit_hooks_) interp->set_jit_hooks(jit_hooks_);
    ok = interp->run_main(error);
    if (opts_.leave_run_objects) {
      if (jit_hooks_) jit_hooks_->interpreter_gone();
      static_cast<void>(interp.release());  // VMOptions::leave_run_objects
    }
  }
  out().flush();
  if (ok) return RunStatus::Ok;
  return report_runtime_error(filename, error);
}

RunStatus VM::call(const Value& callee, std::span<const Value> args, Value& result) {
  ListHeapScope lists(&list_heap_);
  last_error_ = {};
  Interpreter* s = session();
  if (!s || s->running()) {
    last_error_ = VMError{RunStatus::RuntimeError,
                          s ? "the VM is already running a script (a host function cannot call back into it)"
                            : "calls need a session (VMOptions::keep_session)",
                          {}, {}};
    last_error_.report = "runtime error: " + last_error_.message + "\n";
    return RunStatus::RuntimeError;
  }
  ScriptError error;
  const bool ok = s->call(callee, args, result, error);
  out().flush();
  if (ok) return RunStatus::Ok;
  return report_runtime_error(s->module().filename, error);
}

std::optional<SourceReadError> read_source_file(const std::string& path, std::string& source) {
  auto fail = [](std::string why, bool missing = false) { return SourceReadError{std::move(why), missing}; };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail("open '" + path + "': " + std::strerror(errno), errno == ENOENT);
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return fail("open '" + path + "': Is a directory");
    if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > kMaxSourceBytes)
      return fail("run '" + path + "': the source is " + std::to_string(st.st_size) + " bytes, more than the limit of " +
                  std::to_string(kMaxSourceBytes >> 20) + " MiB");
  }
  // A pipe, a device or a file that grows is read up to the limit, no further.
  source.clear();
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("read '" + path + "': " + std::strerror(errno));
    }
    if (n == 0) break;
    if (source.size() + static_cast<size_t>(n) > kMaxSourceBytes)
      return fail("run '" + path + "': the source is more than the limit of " + std::to_string(kMaxSourceBytes >> 20) +
                  " MiB");
    source.append(buf, static_cast<size_t>(n));
  }
  return std::nullopt;
}

bool VM::read_file(const std::string& path, std::string& source) {
  const std::optional<SourceReadError> error = read_source_file(path, source);
  if (!error) return true;
  last_error_ = VMError{RunStatus::CompileError, {}, "tessera-vm: cannot " + error->what + "\n", {}};
  if (opts_.report_errors) err() << last_error_.report;
  return false;
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
