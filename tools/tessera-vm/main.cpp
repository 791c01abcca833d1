// tessera-vm: the command-line front end. Only argument parsing and output;
// everything else is the VM's.
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "vm/interp/vm.h"

namespace {

constexpr const char* kDescription =
    "Tessera VM: a research trace-JIT virtual machine for tensor programs.\n"
    "Runs Tessera Script (.tsb) files.\n\n"
    "Exit status: 0 success; 1 runtime error or failed assert; 2 usage error,\n"
    "unreadable file, or syntax error.";

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);

  // Everything after the first "--" belongs to the script (args()); CLI11
  // parses what comes before it.
  std::vector<std::string> script_args;
  int cli_argc = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      cli_argc = i;
      for (int j = i + 1; j < argc; ++j) script_args.emplace_back(argv[j]);
      break;
    }
  }

  CLI::App app{kDescription, "tessera-vm"};
  app.set_version_flag("--version", std::string("tessera-vm ") + TESSERA_VERSION);
  app.require_subcommand(1);

  std::string run_file;
  CLI::App* run = app.add_subcommand("run", "Run a script: tessera-vm run FILE.tsb [-- ARGS...]");
  run->add_option("file", run_file, "Script to run")->required();
  int max_depth = 10000;
  run->add_option("--max-depth", max_depth, "Call depth at which `stack overflow` is raised")
      ->default_val(10000)
      ->check(CLI::Range(1, 1000000));

  std::string dis_file;
  CLI::App* dis = app.add_subcommand("dis", "Print the bytecode of every function of a script");
  dis->add_option("file", dis_file, "Script to disassemble")->required();

  try {
    app.parse(cli_argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" that exit 0; real usage errors exit 2.
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  tessera::VMOptions opts;
  opts.script_args = std::move(script_args);
  opts.max_depth = max_depth;
  tessera::VM vm(opts);
  tessera::RunStatus status =
      run->parsed() ? vm.run_file(run_file) : vm.disassemble_file(dis_file);
  std::cout.flush();
  return static_cast<int>(status);
}
