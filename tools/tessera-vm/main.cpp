// tessera-vm: the command-line front end. Only argument parsing and output;
// everything else is the VM's.
#include <CLI/CLI.hpp>

#include <algorithm>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/device/device_error.h"
#include "runtime/device/device_selection.h"
#include "runtime/dump_directory.h"
#include "runtime/jit_params.h"
#include "runtime/hotspot_observer.h"
#include "runtime/jit_event_log.h"
#include "runtime/comm/process_world.h"
#include "runtime/run_metrics.h"
#include "vm/graph/collectives.h"
#include "runtime/trace_viewer.h"
#include "runtime/world_timeline.h"
#include "tools/tessera-vm/option_suggestion.h"
#include "tools/tessera-vm/signal_outputs.h"
#include "vm/interp/vm.h"

namespace {

constexpr const char* kDescription =
    "Tessera VM: a research trace-JIT virtual machine for tensor programs.\n"
    "Runs Tessera Script (.tsb) files.\n\n"
    "Exit status: 0 success; 1 runtime error or failed assert; 2 usage error,\n"
    "unreadable file, syntax error, or --device=gpu without a usable GPU.";

// Output that could not be written (a full disk, a closed stdout) is an
// error, as coreutils make it: reported, exit status 1.
int check_output(int status) {
  std::cout.flush();
  if (std::cout) return status;
  // The failed write was earlier (the stream stops writing after it); a
  // closed stdout at least can still be told apart.
  const bool closed = ::fcntl(STDOUT_FILENO, F_GETFD) < 0;
  std::cerr << "tessera-vm: error writing to standard output" << (closed ? ": it is closed" : "") << "\n";
  return status == 0 ? 1 : status;
}

// `--dump DIR` is checked before the run, so that a bad one fails at once (exit 2).
void check_dump_dir(const std::string& dir) {
  if (auto problem = tessera::dump_directory_problem(dir)) throw std::runtime_error("--dump " + dir + ": " + *problem);
}

// The usage error of arguments CLI11 did not expect, where one of them looks
// like an option: "unknown option '--jit-params' (did you mean
// '--jit-param'?)". Returns false where none does (CLI11's message stands).
bool report_unknown_options(const CLI::App& cmd) {
  std::vector<std::string> known;
  for (const CLI::Option* o : cmd.get_options())
    for (const std::string& l : o->get_lnames()) known.push_back("--" + l);
  const std::string where = cmd.get_parent() ? "tessera-vm " + cmd.get_name() : "tessera-vm";
  bool any = false;
  for (const std::string& arg : cmd.remaining()) {
    if (arg.size() < 2 || arg[0] != '-') continue;
    any = true;
    std::cerr << where << ": " << tessera::cli::unknown_option_message(arg, known) << "; see " << where << " --help\n";
  }
  return any;
}

std::string fmt_fixed(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", x);
  return buf;
}

// Below this the VM itself (its JIT, compile threads, kernel cache) may not start.
constexpr uint64_t kMinMemoryLimit = uint64_t{256} << 20;

// --max-memory: "4G", "512M", "65536K", a number of bytes, or 0 (no limit).
std::optional<uint64_t> parse_memory_size(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || end == text.c_str() || errno == ERANGE || text[0] == '-') return std::nullopt;
  const std::string unit = end;
  int shift = 0;
  if (unit == "K" || unit == "k") shift = 10;
  else if (unit == "M" || unit == "m") shift = 20;
  else if (unit == "G" || unit == "g") shift = 30;
  else if (unit == "T" || unit == "t") shift = 40;
  else if (!unit.empty()) return std::nullopt;
  if (shift && n > (UINT64_MAX >> shift)) return std::nullopt;
  return static_cast<uint64_t>(n) << shift;
}

// The default limit: a quarter of the machine's memory (a runaway loop
// fails in seconds rather than after swapping; --max-memory raises it).
uint64_t default_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const uint64_t quarter = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 4 : 0;
  return quarter == 0 ? 0 : std::max(quarter, kMinMemoryLimit);
}

std::string memory_size_text(uint64_t bytes) {
  if (bytes % (uint64_t{1} << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (uint64_t{1} << 30)) return fmt_fixed(static_cast<double>(bytes) / double(uint64_t{1} << 30)) + " GiB";
  return std::to_string(bytes >> 20) + " MiB";
}

}  // namespace

int run_cli(int argc, char** argv) {
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

  // A first word that is neither an option nor a command is a mistyped
  // command (CLI11 alone would say "A subcommand is required").
  if (cli_argc > 1 && argv[1][0] != '-' && std::string(argv[1]) != "run" && std::string(argv[1]) != "dis") {
    std::cerr << "tessera-vm: unknown command '" << argv[1] << "' (the commands are run and dis; see tessera-vm --help)\n";
    return 2;
  }
  // Likewise an option before the command that is not one of the three
  // (CLI11 alone would say "A subcommand is required").
  if (cli_argc > 1 && argv[1][0] == '-') {
    const std::string first = argv[1];
    const std::vector<std::string> top = {"--help", "-h", "--version"};
    if (std::find(top.begin(), top.end(), first) == top.end()) {
      std::cerr << "tessera-vm: " << tessera::cli::unknown_option_message(first, {"--help", "--version"})
                << "; options of a command go after it: tessera-vm run --help\n";
      return 2;
    }
  }

  // A path option given an empty value ("--metrics ''") names no file: a
  // usage error rather than an output silently not written.
  const CLI::Validator a_path(
      [](std::string& v) -> std::string { return v.empty() ? "needs a path, got an empty one" : std::string(); }, "");
  CLI::App app{kDescription, "tessera-vm"};
  app.set_version_flag("--version", std::string("tessera-vm ") + TESSERA_VERSION);
  app.require_subcommand(1);
  app.footer("Run `tessera-vm run --help` for run's options (JIT, dumps, logs, devices, outputs)\n"
             "and the JIT parameters; docs/cli.md describes them all.");

  std::string run_file;
  CLI::App* run = app.add_subcommand("run", "Run a script: tessera-vm run FILE.tsb [-- ARGS...]");
  run->add_option("file", run_file, "Script to run")->required();
  int max_depth = 10000;
  run->add_option("--max-depth", max_depth, "Call depth at which `stack overflow` is raised")
      ->default_val(10000)
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            char* end = nullptr;
            errno = 0;
            const long long n = std::strtoll(v.c_str(), &end, 10);
            if (v.empty() || *end != '\0' || errno == ERANGE) return "'" + v + "' is not an integer";
            if (n < 1 || n > 1000000) return "must be 1 to 1000000, got " + v;
            return {};
          },
          "INT in [1, 1000000]"));
  std::string max_memory = "default";
  run->add_option("--max-memory", max_memory,
                  "Memory the script may allocate before `out of memory` is raised: SIZE with K, M, G or T, or 0 for "
                  "no limit; the default is a quarter of the machine's memory. Enforced as the process's data limit "
                  "(RLIMIT_DATA; not in sanitizer builds)")
      ->type_name("SIZE")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v == "default") return {};
            auto n = parse_memory_size(v);
            if (!n) return "'" + v + "' is not a size (a number with K, M, G or T, e.g. 4G; 0: no limit)";
            if (*n != 0 && *n < kMinMemoryLimit) return "must be at least 256M (or 0: no limit), got " + v;
            return {};
          },
          "SIZE"));
  std::string jit_mode = "on";
  run->add_option("--jit", jit_mode,
                  "on: hot loops are recorded as traces and compiled to native code "
                  "(asmjit, then LLVM ORC for traces that stay hot; see tier); off: interpreter only")
      ->default_val("on")
      ->check(CLI::IsMember({"on", "off"}));
  std::vector<std::string> jit_param_args;
  run->add_option("--jit-param", jit_param_args,
                  "Set a JIT parameter, NAME=VALUE (repeatable; parameters listed below)")
      ->allow_extra_args(false)
      ->type_name("NAME=VALUE");
  std::string device_name = "auto";
  run->add_option("--device", device_name,
                  "Which device runs the tensor kernels (the report of --stats says which ran them and why):\n" +
                      tessera::device::describe_device_choices())
      ->default_val("auto")
      ->check(CLI::IsMember(tessera::device::device_choice_names()));
  bool want_stats = false;
  run->add_flag("--stats", want_stats,
                "After the run (also after a runtime error) print JIT statistics to stderr: "
                "parameters, the device, hot loops and functions, wall time");
  bool profile_kernels = false;
  run->add_flag("--profile-kernels", profile_kernels,
                "GPU: measure each kernel's DRAM throughput, achieved occupancy and tensor-pipe use with CUPTI's "
                "Range Profiler (its K3 variants being tuned and its first call; each measured kernel is replayed), "
                "shown per kernel in --stats, --metrics (gpu_kernels' measured) and the trace viewer (as --jit-param "
                "kprofile=1)");
  std::string dump_dir;
  run->add_option("--dump", dump_dir,
                  "Write each compiled trace's IR (as recorded, after each pass, as compiled), "
                  "T1 assembly and T2 LLVM IR and object code to DIR "
                  "(files SCRIPT-LINE-traceN.ir / .K-PASS.ir / .s / .ll / .o), each fused "
                  "tensor kernel's kernel IR, LLVM IR, CUDA C++ and its PTX for compute_90 where NVRTC is installed "
                  "(kernel-region-HASH.kir / .ll / .cu / .ptx), the JIT's events, one JSON object per line "
                  "(events.jsonl), the trace tree as Graphviz (traces.dot, and traces.svg where dot is installed), a "
                  "timeline of the run for Perfetto or chrome://tracing (timeline.json), and a page that shows all "
                  "of it in a browser (index.html). "
                  "DIR is made if missing; one that cannot be written is an error before the run. Under mpirun each "
                  "rank writes these to DIR/rank-K/ (its collectives on a track of its timeline) and, after a run "
                  "that succeeded on every rank, rank 0 merges the ranks' timelines into DIR/timeline.json (a "
                  "process per rank, their clocks aligned, each collective linked across the ranks) with "
                  "DIR/index.html linking each rank's page")
      ->type_name("DIR")
      ->check(a_path);
  size_t dump_keep = tessera::jit::JitTimelineLimits{}.keep;
  run->add_option("--dump-keep", dump_keep,
                  "With --dump, what timeline.json keeps of each kernel, trace and kind of event: its first N and "
                  "last N spans or instants; those between are counted, and the timeline says how many it left "
                  "out (so a long run's dump stays small)")
      ->type_name("N")
      ->default_val(dump_keep)
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  int64_t comm_timeout = 0;
  run->add_option("--comm-timeout", comm_timeout,
                  "Under mpirun: seconds a collective (all_reduce, barrier, send, ...) waits for the other ranks "
                  "before it fails, naming the ranks that never came (as --jit-param commtimeout=SECONDS; "
                  "default 60); docs/distributed.md")
      ->type_name("SECONDS")
      ->check(CLI::Range(int64_t{1}, int64_t{86400}));
  std::string jit_log;
  run->add_flag("--jit-log{-}", jit_log,
                "Print a line per JIT event as it happens (recording started, trace stopped or aborted, compiled, "
                "blacklisted, tier-up, invalidated, kernels compiled, K3, dynamic dims, tuned, refused) to stderr, "
                "or with --jit-log=FILE to FILE; docs/observability.md lists the events and their fields")
      ->type_name("[=FILE]")
      ->check(a_path);
  std::string metrics_file;
  run->add_option("--metrics", metrics_file,
                  "Append what the run did to FILE as JSON lines: one for the run (wall time, traces, compile times "
                  "per tier, CPU time per tier, time in compiled code, each fused kernel's calls, time and GB/s, the "
                  "collectives) and one per hot loop, each with the rank and world_size; under mpirun every rank "
                  "appends its lines to FILE (each rank's lines in one write); docs/observability.md lists the fields")
      ->type_name("FILE.jsonl")
      ->check(a_path);
  run->footer("JIT parameters (--jit-param NAME=VALUE):\n" + tessera::JitParams::describe_all() +
              "\nEnvironment:\n"
              "  TESSERA_CACHE_DIR      the persistent kernel cache (default $XDG_CACHE_HOME/tessera, else\n"
              "                         ~/.cache/tessera); deleting it is always safe; kcache=0 leaves it alone\n"
              "  TESSERA_SIMD           avx2 or sse2: tensor kernels (the interpreter's and generated) no wider\n"
              "                         than that, though the CPU has AVX-512 / AVX2 (the default: its widest)\n"
              "  TESSERA_VERIFY_IR      1: verify each trace's IR after every optimizer pass; abort: also abort\n"
              "                         on a failure\n"
              "  TESSERA_LLVM_LIBRARY   the LLVM library (T2, the CPU kernel compiler) loaded at its first use\n"
              "                         (default libtessera-llvm.so beside tessera-vm, in ../lib/tessera, then\n"
              "                         the build tree's)\n"
              "  TESSERA_CUDA_DRIVER    the CUDA driver library --device loads (default libcuda.so.1, then\n"
              "                         libcuda.so)\n"
              "  TESSERA_NVRTC_LIBRARY  the NVRTC library GPU kernels are compiled with (default libnvrtc.so.13,\n"
              "                         libnvrtc.so.12, libnvrtc.so, then lib64/libnvrtc.so.13 of $CUDA_HOME and\n"
              "                         of /usr/local/cuda)\n"
              "  TESSERA_CUBLASLT_LIBRARY  the cuBLASLt library matrix products on the GPU use (default\n"
              "                         libcublasLt.so.13, .so.12, .so, then lib64 of $CUDA_HOME and of /usr/local/cuda)\n"
              "  TESSERA_GPU_EMULATION  1: --device=gpu without a GPU runs on a host emulation of one (for testing;\n"
              "                         kernels built by $TESSERA_EMULATION_CXX, default c++, with Boost.Context)\n"
              "  TESSERA_CUPTI_LIBRARY  the CUPTI library that records GPU kernels (cupti=1; default libcupti.so.13,\n"
              "                         then lib64 of $CUDA_HOME and of /usr/local/cuda); loaded only with a GPU\n"
              "  TESSERA_MPI_LIBRARY    under mpirun: the MPI library collectives use (default libmpi.so.40, then\n"
              "                         libmpi.so; Open MPI's ABI); a run without mpirun loads none\n"
              "  TESSERA_NCCL_LIBRARY   under mpirun with a GPU: the NCCL library collectives of tensors on the GPU\n"
              "                         use (default libnccl.so.2, then lib64 of $CUDA_HOME and of /usr/local/cuda);\n"
              "                         loaded at the first such collective. Each rank takes GPU\n"
              "                         OMPI_COMM_WORLD_LOCAL_RANK (modulo the GPUs it sees)\n"
              "  TESSERA_CRASH_DIR      where a GPU kernel that faults leaves its crash capture (the region, kernel\n"
              "                         IR, CUDA C++, launch.json: tessera-crash-PID-N; default the temporary\n"
              "                         directory, $TMPDIR or /tmp)\n");

  std::string dis_file;
  CLI::App* dis = app.add_subcommand("dis", "Print the bytecode of every function of a script");
  dis->add_option("file", dis_file, "Script to disassemble")->required();

  tessera::JitParams jit_params;
  try {
    app.parse(cli_argc, argv);
    jit_params.enabled = jit_mode == "on";
    for (const std::string& arg : jit_param_args) {
      try {
        jit_params.set(arg);
      } catch (const std::invalid_argument& e) {
        // Reported like CLI11's own validation errors (message, exit 2).
        throw CLI::ValidationError("--jit-param", e.what());
      }
    }
    if (profile_kernels) jit_params.set("kprofile=1");
    if (comm_timeout > 0) jit_params.set("commtimeout=" + std::to_string(comm_timeout));
  } catch (const CLI::ExtrasError& e) {
    // An unknown option: name it, and the option it most likely meant.
    if (report_unknown_options(run->parsed() ? *run : dis->parsed() ? *dis : app)) return 2;
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" that exit 0; real usage errors exit 2.
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  // Before the VM and the JIT start threads, which inherit its signal mask.
  static tessera::cli::SignalOutputs& signals = *new tessera::cli::SignalOutputs;

  // Under mpirun this process is one rank: MPI is loaded and started before
  // the script runs (exit status 2 where it cannot be).
  if (run->parsed()) {
    try {
      // With --device=gpu the GPU's tensors go to NCCL one collective at a
      // time; buckets (which take tensors to the host) serve the other runs.
      const bool gpu = device_name == "gpu";
      tessera::comm::join_world(static_cast<double>(jit_params.commtimeout),
                                gpu ? 0 : static_cast<size_t>(jit_params.bucket) << 20);
    } catch (const std::runtime_error& e) {
      std::cerr << "tessera-vm: " << e.what() << "\n";
      return 2;
    }
  }
  tessera::VMOptions opts;
  opts.script_args = std::move(script_args);
  if (tessera::process_collectives().distributed())
    opts.error_prefix = "[rank " + std::to_string(tessera::process_collectives().rank()) + "] ";
  opts.max_depth = max_depth;
  if (run->parsed()) {
    const uint64_t limit = max_memory == "default" ? default_memory_limit() : *parse_memory_size(max_memory);
    // The sanitizers' shadow memory counts as data: no limit under them.
#if defined(__SANITIZE_ADDRESS__)
    constexpr bool kSanitized = true;
#else
    constexpr bool kSanitized = false;
#endif
    if (limit != 0 && !kSanitized) {
      const struct rlimit rl{limit, limit};
      if (::setrlimit(RLIMIT_DATA, &rl) == 0)
        opts.out_of_memory_note = "the memory limit is " + memory_size_text(limit) + "; see --max-memory";
    }
  }
#ifndef __SANITIZE_ADDRESS__
  // Without a log (dump, metrics, jit log) the process ends right after the
  // run, running no destructor (below): the run's objects go with it.
  opts.leave_run_objects = dump_dir.empty() && metrics_file.empty() && jit_log.empty();
#endif
  tessera::VM vm(opts);
  if (!run->parsed()) {
    tessera::RunStatus status = vm.disassemble_file(dis_file);
    return check_output(static_cast<int>(status));
  }

  // --device=gpu and cpu are chosen before the script runs, so that gpu
  // without a GPU fails at once (exit status 2, like a usage error); auto
  // when first needed (HotspotObserver::choose_device_at_first_use): a
  // start does not probe for a GPU the program may never use.
  const tessera::device::DeviceChoice device_choice = *tessera::device::parse_device_choice(device_name);
  std::optional<tessera::device::DeviceSelection> device;
  try {
    if (device_choice != tessera::device::DeviceChoice::Auto) device = tessera::device::select_device(device_choice);
  } catch (const tessera::device::DeviceError& e) {
    std::cerr << "tessera-vm: " << e.what() << "\n";
    return 2;
  }

  // The event log's files are opened before the script runs, so that a
  // dump directory or log file that cannot be written fails at once (exit 2).
  std::shared_ptr<tessera::jit::JitEventLog> events;
  const tessera::Collectives& world = tessera::process_collectives();
  std::string world_dump_dir;  // under mpirun: --dump's DIR, where rank 0 merges the ranks' timelines
  try {
    if (!dump_dir.empty()) {
      namespace fs = std::filesystem;
      check_dump_dir(dump_dir);
      std::string process_name = "tessera-vm run " + run_file;
      if (world.distributed()) {
        // Each rank's dump is DIR/rank-K/; rank 0 merges the timelines into DIR/ at the end (no earlier run's then).
        world_dump_dir = dump_dir;
        if (world.rank() == 0)
          for (const char* stale : {"timeline.json", "index.html"}) fs::remove(fs::path(dump_dir) / stale);
        dump_dir = (fs::path(dump_dir) / ("rank-" + std::to_string(world.rank()))).string();
        check_dump_dir(dump_dir);
        process_name = "rank " + std::to_string(world.rank()) + " (" + process_name + ")";
      }
      events = std::make_shared<tessera::jit::JitEventLog>();
      events->write_jsonl((fs::path(dump_dir) / "events.jsonl").string());
      tessera::jit::JitTimeline::Limits limits;
      limits.keep = dump_keep;
      events->keep_timeline((fs::path(dump_dir) / "timeline.json").string(), process_name, limits);
      events->keep_tally();  // the viewer's calls and time per kernel
      if (world.distributed()) events->timeline()->set_rank(world.rank(), world.size());
    }
    if (!metrics_file.empty()) {
      std::ofstream probe(metrics_file, std::ios::app);  // fails now rather than after the run
      if (!probe) throw std::runtime_error("--metrics " + metrics_file + ": cannot be written");
      if (!events) events = std::make_shared<tessera::jit::JitEventLog>();
      events->keep_tally();
    }
    if (!jit_log.empty()) {
      if (!events) events = std::make_shared<tessera::jit::JitEventLog>();
      if (jit_log == "-") events->log_to(std::cerr);
      else events->log_to_file(jit_log);
    }
  } catch (const std::runtime_error& e) {
    std::cerr << "tessera-vm: " << e.what() << "\n";
    return 2;
  }

  // The runtime is built even with --jit=off, so that --stats can say so;
  // it is only installed (the interpreter only calls it) when the JIT is on.
  tessera::HotspotObserver runtime(jit_params);
  runtime.set_script_name(run_file);
  if (events) runtime.set_event_log(events);
  try {
    if (device) runtime.set_device(std::move(*device));
    else runtime.choose_device_at_first_use(device_choice);
  } catch (const tessera::device::DeviceError& e) {
    std::cerr << "tessera-vm: --device: the GPU could not be started: " << e.what() << "\n";
    return 2;
  }
  if (jit_params.enabled) {
    runtime.enable_tracing(vm, dump_dir);
    if (want_stats || !metrics_file.empty() || !dump_dir.empty()) runtime.enable_tier_profile();
#ifndef __SANITIZE_ADDRESS__
    // The process ends after the run: a background LLVM compile still in
    // progress then is not waited for (a short script's run would wait up
    // to tens of ms for code it never runs). Not with logs or dumps to
    // finish, nor under the sanitizers, whose leak check runs at exit.
    if (!events) runtime.abandon_compile_at_exit();
#endif
    vm.set_jit_hooks(&runtime);
  }
  const auto start = std::chrono::steady_clock::now();
  // SIGINT or SIGTERM during the run: the timeline and a --metrics run line
  // are written from the signal's thread, which may read only the
  // thread-safe parts (the event log, the tally, the parameters).
  signals.set_writer([&](const char* signal, int exit_status) {
    const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    try {
      if (events) events->finish();
      if (!metrics_file.empty())
        tessera::append_metrics_lines(metrics_file,
                                      tessera::interrupted_run_metrics_line(runtime, {run_file, exit_status, wall_ms},
                                                                            signal, events->tally()));
    } catch (const std::runtime_error& e) {
      std::cerr << "tessera-vm: " << e.what() << "\n";
    }
  });
  struct RunEnded {  // every way out of here: the writer's captures go
    tessera::cli::SignalOutputs& s;
    ~RunEnded() { s.run_ended(); }
  } run_ended{signals};
  tessera::RunStatus status = vm.run_file(run_file);
  // All_reduces still in buckets: every rank takes part in them, read or not.
  if (status == tessera::RunStatus::Ok)
    if (std::string e = tessera::comm::finish_collectives(); !e.empty()) {
      std::cerr << opts.error_prefix << run_file << ": runtime error: " << e << "\n";
      status = tessera::RunStatus::RuntimeError;
    }
  runtime.finish_device();
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
  signals.run_ended();
  std::cout.flush();
  if (want_stats) {
    runtime.print_stats(std::cerr, wall.count());
    const tessera::ListHeap& lists = vm.list_heap();
    std::cerr << "  cycle collector: " << lists.stats().collections << " collections, " << lists.stats().lists_freed
              << " lists in cycles freed, " << fmt_fixed(lists.stats().ms) << " ms\n";
    std::cerr.flush();
  }
  // Each output that cannot be written is reported, and the run exits 1.
  bool outputs_written = true;
  auto write = [&](auto&& what) {
    try {
      what();
    } catch (const std::runtime_error& e) {
      std::cerr << "tessera-vm: " << e.what() << "\n";
      outputs_written = false;
    }
  };
  if (events) {
    // The timeline (the exits' counts and the trace tree came as the interpreter ended).
    write([&] { events->finish(); });
    if (!dump_dir.empty()) {
      write([&] { tessera::write_trace_viewer(runtime, run_file, wall.count(), dump_dir); });
      write([&] {
        if (std::string e = runtime.dump_error(); !e.empty())
          throw std::runtime_error("--dump: " + e + " (the first file of the dump that could not be written)");
      });
    }
    if (!metrics_file.empty())
      write([&] {
        tessera::append_run_metrics(metrics_file, runtime,
                                    {run_file, static_cast<int>(status), std::chrono::duration<double, std::milli>(wall).count()},
                                    events->tally());
      });
  }
  // Under mpirun, once every rank's files are written: rank 0 merges the timelines.
  if (!world_dump_dir.empty())
    write([&] {
      tessera::jit::finish_world_dump(world_dump_dir, status == tessera::RunStatus::Ok && outputs_written, run_file);
    });
  if (!outputs_written && status == tessera::RunStatus::Ok) status = tessera::RunStatus::RuntimeError;
  // A rank that failed leaves without MPI_Finalize: mpirun then ends the
  // others (and names this one) instead of their waiting for it.
  if (status == tessera::RunStatus::Ok) tessera::comm::leave_world();
  // Every output is written: the process ends here, its memory with it,
  // running no destructor. A compile thread may still read the traces
  // (CompileWorker::abandon); and freeing the program's objects one by one
  // took union_find's 450 000 lists 190 ms, a third of its run (glibc's
  // free coalescing and consolidating its bins). Not with a log, whose
  // background kernel compiles the observer drains into it as it goes, nor
  // under the sanitizers, whose leak check runs at exit.
#ifndef __SANITIZE_ADDRESS__
  if (!events || runtime.compile_abandoned()) {
#else
  if (runtime.compile_abandoned()) {
#endif
    const int code = check_output(static_cast<int>(status));
    std::cerr.flush();
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return check_output(static_cast<int>(status));
}

#if defined(__SANITIZE_ADDRESS__)
// The sanitizer build's defaults, under any ASAN_OPTIONS (which override them flag by flag).
// tessera-vm loads libtessera-llvm.so with dlopen, so LLVM's thread_locals live in dynamic-TLS
// blocks; GCC 12's runtime takes one that malloc placed 16 bytes past a page boundary for
// glibc 2.19-2.24's layout and hands LeakSanitizer a garbage range, on which its tracer crashes
// at exit (google/sanitizers#1322). Glibc 2.36 mallocs those blocks in ld.so, and LSan counts
// ld.so's blocks as reachable, so the leak check loses nothing without the hook.
extern "C" const char* __asan_default_options() { return "intercept_tls_get_addr=0"; }
#endif

int main(int argc, char** argv) {
  // The VM raises "out of memory" as a script error; memory that runs out
  // outside the script (starting the JIT, a compile) ends the run here.
  try {
    return run_cli(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "tessera-vm: out of memory outside the script (a --max-memory limit too low?)\n";
    return 1;
  }
}
