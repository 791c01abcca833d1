#include "runtime/trace_graph.h"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <thread>

#include "codegen/kernel/kernel_events.h"
#include "runtime/quoted_text.h"
#include "vm/core/text_file.h"

extern char** environ;

namespace tessera::jit {

namespace {

// Trees with more edges get dot's quick layout; none waits longer than this.
constexpr size_t kDotDetailedEdges = 200;
constexpr int kDotSeconds = 20;

const char* kind_name(Trace::Kind k) {
  switch (k) {
    case Trace::Kind::Loop: return "loop";
    case Trace::Kind::Function: return "function";
    case Trace::Kind::Side: return "side trace";
  }
  return "?";
}

// A kernel's label: its operations in order, e.g. "mul add tanh".
std::string kernel_label(const Region& r) {
  const std::string ops = kir::region_ops_text(r);
  return fmt::format("kernel ({} ops)\n{}", r.ops.size(), ops.size() > 60 ? ops.substr(0, 57) + "..." : ops);
}

}  // namespace

std::string trace_tree_dot(const std::vector<std::unique_ptr<Trace>>& traces,
                           const std::vector<BlacklistedRoot>& blacklisted, const std::string& script) {
  const std::string file = std::filesystem::path(script).filename().string();
  std::string out = "digraph traces {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n"
                    "  edge [fontname=\"monospace\", fontsize=9];\n";
  bool interpreter = false;
  std::map<std::string, std::string> kernels;  // node id -> label
  std::string edges;
  for (const auto& tp : traces) {
    const Trace& t = *tp;
    const std::string id = fmt::format("t{}", t.id);
    std::string label = fmt::format("trace {}\n{} at {}:{}", t.id, kind_name(t.kind), file, t.line);
    if (t.kind == Trace::Kind::Function) label += "\nfn " + t.function;
    label += fmt::format("\n{} IR ({} recorded)", t.ir.size(), t.recorded_size);
    label += t.tier ? fmt::format(", T{}", t.tier) : std::string(", no code");
    if (t.kind != Trace::Kind::Side) label += fmt::format("\nentered {} times", t.entries);  // sides: by their exit
    std::string style;
    if (t.dead || !t.tier) {
      label += t.dead && t.tier ? "\ninvalidated" : "\ndropped";
      style = ", style=\"dashed,filled\", fillcolor=\"#eeeeee\", fontcolor=\"#666666\"";
    } else if (t.kind != Trace::Kind::Side) {
      style = ", style=filled, fillcolor=\"#dbe9f6\"";
    }
    out += fmt::format("  {} [label={}{}];\n", id, quoted_text(label), style);
    if (t.kind == Trace::Kind::Loop && t.link < 0 && t.tier)
      edges += fmt::format("  {} -> {} [style=dashed, label=\"loop\"];\n", id, id);
    if (t.link >= 0)
      edges += fmt::format("  {} -> t{} [style=dashed, label={}];\n", id, t.link,
                           quoted_text(t.link == static_cast<int32_t>(t.id) ? "loop" : "link"));
    // Exits: to the side trace attached there, else to the interpreter.
    for (size_t s = 0; s < t.exits.size(); ++s) {
      const Trace* side = side_trace_at(traces, t.id, s);
      const int line = t.exit_line(s);
      if (side) {
        edges += fmt::format("  {} -> t{} [label={}];\n", id, side->id,
                             quoted_text(fmt::format("exit {} (line {})\ntaken {}", s, line, t.exits[s])));
      } else if (t.exits[s]) {
        interpreter = true;
        edges += fmt::format("  {} -> interpreter [color=\"#999999\", label={}];\n", id,
                             quoted_text(fmt::format("exit {} (line {})\ntaken {}", s, line, t.exits[s])));
      }
    }
    // The fused kernels it calls.
    std::map<std::string, int> calls;
    for (const CallTarget& c : t.ir.calls()) {
      const Region* region = c.kernel_region();
      if (!region) continue;
      const std::string k = kir::region_report_id(*region);
      kernels.emplace(k, kernel_label(*region));
      ++calls[k];
    }
    for (const auto& [k, n] : calls)
      edges += fmt::format("  {} -> {} [style=dotted, arrowhead=none{}];\n", id, k,
                           n > 1 ? fmt::format(", label=\"{} calls\"", n) : std::string());
  }
  for (size_t b = 0; b < blacklisted.size(); ++b)
    out += fmt::format("  b{} [label={}, style=filled, fillcolor=\"#cccccc\"];\n", b,
                       quoted_text(fmt::format("blacklisted {}\nat {}:{}", blacklisted[b].kind, file, blacklisted[b].line)));
  for (const auto& [k, label] : kernels)
    out += fmt::format("  {} [shape=component, style=filled, fillcolor=\"#fde7c8\", label={}];\n", k, quoted_text(label));
  if (interpreter) out += "  interpreter [shape=ellipse, style=filled, fillcolor=\"#f0f0f0\"];\n";
  return out + edges + "}\n";
}

std::string write_trace_tree(const std::string& dir, const std::string& dot_text) {
  namespace fs = std::filesystem;
  const std::string dot_path = (fs::path(dir) / "traces.dot").string();
  if (auto error = write_text_file(dot_path, dot_text)) throw std::runtime_error(*error);
  // `dot -Tsvg -o traces.svg traces.dot`, without a shell. Dot's default
  // layout takes seconds for a few hundred edges and over half a minute for
  // 750 (a parser's 214 traces); a larger tree is laid out with straight
  // edges and fewer crossing-minimisation and network-simplex rounds (1.5 s
  // there), and no layout may take longer than kDotSeconds.
  const std::string svg_path = (fs::path(dir) / "traces.svg").string();
  size_t edges = 0;
  for (size_t at = dot_text.find("->"); at != std::string::npos; at = dot_text.find("->", at + 2)) ++edges;
  std::vector<std::string> args = {"dot", "-Tsvg", "-o", svg_path};
  if (edges > kDotDetailedEdges)
    for (const char* fast : {"-Gsplines=line", "-Gmclimit=0.3", "-Gnslimit=1", "-Gnslimit1=1"}) args.push_back(fast);
  args.push_back(dot_path);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Dot takes the signals the CLI blocks for itself (tools/tessera-vm/signal_outputs.h).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int err = posix_spawnp(&pid, "dot", nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (err != 0)
    return fmt::format("Graphviz's dot could not be started ({}): install graphviz for traces.svg", std::strerror(err));
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kDotSeconds);
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      std::error_code ec;
      fs::remove(svg_path, ec);
      return fmt::format("dot took more than {} s to lay out the {} edges of traces.dot (open traces.dot with another "
                         "Graphviz layout, e.g. sfdp)",
                         kDotSeconds, edges);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
      return "Graphviz's dot is not installed: install graphviz for traces.svg";
    return "dot failed on traces.dot";
  }
  return {};
}

}  // namespace tessera::jit
