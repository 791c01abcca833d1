#include "runtime/run_metrics.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "runtime/gpu_profile_json.h"
#include "runtime/tier_profile.h"
#include "vm/graph/collectives.h"

namespace tessera {

namespace {

using json = nlohmann::ordered_json;

double round3(double v) { return std::round(v * 1000) / 1000; }

const char* kind_name(jit::Trace::Kind k) {
  return k == jit::Trace::Kind::Loop ? "loop" : k == jit::Trace::Kind::Function ? "function" : "side";
}

// Which rank of the world wrote a line (0 of 1 without mpirun).
void add_rank(json& j) {
  const Collectives& world = process_collectives();
  j["rank"] = world.rank();
  j["world_size"] = world.size();
}

// What every run line starts with (the parameters are fixed for the run:
// any thread may read them).
json run_record(const RunOutcome& run, const JitParams& params) {
  json r;
  r["record"] = "run";
  r["script"] = run.script;
  add_rank(r);
  r["status"] = run.status;
  r["wall_ms"] = round3(run.wall_ms);
  r["jit"] = params.enabled;
  return r;
}

json params_of(const JitParams& params) {
  json j = json::object();
  for (const auto& [name, value] : params.list()) j[name] = value;
  return j;
}

// Each fused kernel's calls, time and rates (the tally is thread-safe).
json kernel_lines(const jit::KernelCallTally* tally) {
  json kernels = json::array();
  if (tally)
    for (const auto& [name, kt] : tally->kernels()) {
      json j = {{"kernel", name}, {"device", kt.device}, {"calls", kt.calls}, {"ms", round3(kt.ms)},
                {"bytes", kt.bytes}, {"gb_per_s", kt.ms > 0 ? round3(static_cast<double>(kt.bytes) / kt.ms / 1e6) : 0.0}};
      if (kt.flops) j["gflop_per_s"] = kt.ms > 0 ? round3(static_cast<double>(kt.flops) / kt.ms / 1e6) : 0.0;
      kernels.push_back(std::move(j));
    }
  return kernels;
}

}  // namespace

std::string run_metrics_lines(const HotspotObserver& rt, const RunOutcome& run, const jit::KernelCallTally* tally) {
  std::string out;
  json r = run_record(run, rt.params());
  r["device"] = rt.device() ? rt.device()->name : "cpu";
  r["params"] = params_of(rt.params());
  const jit::TraceJit* tj = rt.tracing();
  if (tj) {
    const jit::TraceStats& s = tj->stats();
    uint64_t aborted = 0, pending = 0;
    // By reason (tracer/abort_reasons.def's names), so that a harness tells a
    // trace the recorder gave up from one a backend could not compile.
    json aborts = json::object();
    for (size_t i = 0; i < s.aborts.size(); ++i) {
      aborted += s.aborts[i];
      if (s.aborts[i]) aborts[jit::abort_reason_name(static_cast<jit::AbortReason>(i))] = s.aborts[i];
    }
    for (const auto& t : tj->traces()) pending += t->pending;
    r["traces"] = {{"recorded", s.recorded},          {"compiled", s.compiled},
                   {"side", s.side_traces},           {"shared_exits", s.shared_exits}, {"aborted", aborted},
                   {"blacklisted_loops", s.blacklisted_loops}, {"blacklisted_functions", s.blacklisted_functions},
                   {"invalidated", s.invalidated},    {"upgraded_to_t2", s.upgrades}, {"pending", pending}};
    r["aborts"] = aborts;
    r["compile_ms"] = {{"record", round3(s.record_ms)},
                       {"optimize", round3(s.optimize_ms)},
                       {"t1", round3(s.tier_compile_ms[0])},
                       {"t2", round3(s.tier_compile_ms[1])}};
    if (auto ms = tj->telemetry().tier_cpu_ms())
      r["cpu_ms"] = {{"t1", round3((*ms)[1])}, {"t2", round3((*ms)[2])}, {"elsewhere", round3((*ms)[0])}};
    double native = 0;
    for (const auto& t : tj->traces()) native += t->native_ms;
    r["native_ms"] = round3(native);
  }
  const kernels::KernelCallStats k = rt.kernels().stats();
  r["kernel_compile_ms"] = round3(k.compile_ms + k.load_ms);
  r["kernel_tune_ms"] = round3(k.tune_ms);
  r["kernels"] = kernel_lines(tally);
  // CUPTI's account of the GPU's kernels (finish_device took its last records).
  const std::shared_ptr<const kernels::GpuTarget> gpu = rt.gpu_target();
  r["gpu_kernels"] = gpu ? gpu_kernels_json(gpu->profile()) : json::array();
  r["gpu_profile"] = gpu_profile_json(gpu.get());
  // This rank's collectives, as --stats' world line counts them.
  const CollectiveCounters& cc = process_collectives().counters();
  json calls = json::object();
  for (int i = 0; i < kCollectiveKinds; ++i)
    if (cc.calls[i]) calls[collective_name(static_cast<CollectiveKind>(i))] = cc.calls[i];
  r["collectives"] = {{"calls", calls}, {"bytes", cc.bytes}, {"ms", round3(cc.ms)}};
  out += r.dump() + "\n";

  // One line per hot loop, with the traces rooted there.
  for (const HotspotObserver::HotLoop& l : rt.hot_loops()) {
    json j;
    j["record"] = "loop";
    j["script"] = run.script;
    add_rank(j);
    j["at"] = fmt::format("{}:{}", run.script, l.line);
    j["function"] = l.function;
    j["hot"] = l.times;
    json traces = json::array();
    uint64_t entries = 0, exits = 0;
    double compile = 0, native = 0;
    if (tj) {
      for (const auto& root : tj->traces()) {
        if (root->kind != jit::Trace::Kind::Loop || root->line != l.line || root->function != l.function) continue;
        for (const auto& t : tj->traces()) {
          if (t->root != root->id) continue;
          traces.push_back({{"trace", t->id}, {"kind", kind_name(t->kind)}, {"tier", t->tier}, {"dead", t->dead}});
          entries += t->entries;
          exits += t->exits.total();
          compile += t->compile_ms;
          native += t->native_ms;
        }
      }
    }
    j["traces"] = traces;
    j["entries"] = entries;
    j["exits"] = exits;
    j["compile_ms"] = round3(compile);
    j["native_ms"] = round3(native);
    out += j.dump() + "\n";
  }
  return out;
}

// One write(2) on a file opened O_APPEND: the lines of ranks appending to
// one file at once never interleave (a local file system's appends are
// atomic; NFS's are not).
void append_metrics_lines(const std::string& path, const std::string& lines) {
  auto fail = [&path](int err) {
    return std::runtime_error(fmt::format("--metrics {}: cannot be written ({})", path, std::strerror(err)));
  };
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw fail(errno);
  size_t done = 0;
  while (done < lines.size()) {
    const ssize_t n = ::write(fd, lines.data() + done, lines.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      ::close(fd);
      throw fail(err);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) throw fail(errno);  // a full disk may show only here (NFS)
}

void append_run_metrics(const std::string& path, const HotspotObserver& rt, const RunOutcome& run,
                        const jit::KernelCallTally* tally) {
  append_metrics_lines(path, run_metrics_lines(rt, run, tally));
}

std::string interrupted_run_metrics_line(const HotspotObserver& rt, const RunOutcome& run, const char* signal,
                                         const jit::KernelCallTally* tally) {
  json r = run_record(run, rt.params());
  r["interrupted"] = signal;
  r["params"] = params_of(rt.params());
  r["kernels"] = kernel_lines(tally);
  return r.dump() + "\n";
}

}  // namespace tessera
