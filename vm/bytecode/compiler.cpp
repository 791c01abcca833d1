// compile(): module-level driver. Registers every global first (which makes
// functions hoisted and top-level lets visible to all functions), then
// compiles <main> and each function with a FunctionCompiler.
#include "vm/bytecode/compiler.h"

#include "vm/bytecode/function_compiler.h"
#include "vm/bytecode/global_table.h"

namespace tessera {

std::unique_ptr<Module> compile(const ast::Program& prog, const CompileOptions& opts) {
  auto module = std::make_unique<Module>();
  module->filename = prog.filename;
  GlobalTable globals(*module, opts.is_builtin);
  if (opts.session) globals.continue_session(*opts.session);

  auto main = std::make_unique<FunctionProto>();
  main->name = "<main>";
  main->line = 1;
  module->functions.push_back(std::move(main));

  std::vector<std::pair<const ast::FnDecl*, FunctionProto*>> fns;
  for (const auto& s : prog.stmts) {
    if (s->kind == ast::StmtKind::FnDecl) {
      const auto& fn = static_cast<const ast::FnDecl&>(*s);
      auto proto = std::make_unique<FunctionProto>();
      proto->name = fn.name;
      proto->line = fn.loc.line;
      proto->nparams = static_cast<int>(fn.params.size());
      globals.declare_function(fn.name, proto.get());
      fns.emplace_back(&fn, proto.get());
      module->functions.push_back(std::move(proto));
    } else if (s->kind == ast::StmtKind::Let) {
      globals.declare_variable(static_cast<const ast::Let&>(*s).name);
    }
  }

  FunctionCompiler(*module->main(), globals).compile_main(prog.stmts);
  for (auto [decl, proto] : fns) FunctionCompiler(*proto, globals).compile_function(*decl);
  for (auto& fn : module->functions) fn->file = prog.filename;
  return module;
}

}  // namespace tessera
