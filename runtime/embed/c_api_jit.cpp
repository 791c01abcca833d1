// The C ABI (include/tessera/tessera.h): JIT parameters, dumps and
// statistics.
#include <sstream>

#include "runtime/dump_directory.h"
#include "runtime/embed/c_api_support.h"
#include "runtime/run_metrics.h"

using namespace tessera;
using namespace tessera::embed;

namespace {

tsr_status too_late(tsr_vm& m, const char* what) {
  return m.fail(TSR_EBUSY, std::string(what) + " must be set before the VM first runs code (tsr_run_* or tsr_call*)");
}

// The embedding layer's own counters, as JSON members.
std::string counters_json(const tsr_vm& m) {
  const EmbedCounters& c = m.counters;
  std::ostringstream os;
  os << "{\"host_calls\":" << c.host_calls << ",\"host_function_calls\":" << c.host_function_calls
     << ",\"tensor_bytes_copied\":" << c.tensor_bytes_copied << ",\"tensors_wrapped\":" << c.tensors_wrapped
     << ",\"tensors_exported\":" << c.tensors_exported << ",\"live_handles\":" << m.handles.live() << "}";
  return os.str();
}

}  // namespace

extern "C" {

tsr_status tsr_set_jit_param(tsr_vm* vm, const char* name, const char* value) {
  return with_vm(vm, [&](tsr_vm& m) {
    if (!name) return null_argument(m, "name");
    if (!value) return null_argument(m, "value");
    if (m.started) return too_late(m, "JIT parameters");
    try {
      m.params.set(std::string(name) + "=" + value);
    } catch (const std::invalid_argument& e) {
      return m.fail(TSR_EINVAL, e.what());
    }
    return m.ok();
  });
}

tsr_status tsr_enable_dump(tsr_vm* vm, const char* dir) {
  return with_vm(vm, [&](tsr_vm& m) {
    if (!dir || !*dir) return null_argument(m, "dir");
    if (m.started) return too_late(m, "the dump directory");
    if (auto problem = dump_directory_problem(dir))
      return m.fail(TSR_EIO, std::string("dump directory ") + dir + ": " + *problem);
    m.dump_dir = dir;
    return m.ok();
  });
}

tsr_status tsr_stats(tsr_vm* vm, tsr_stats_format format, tsr_value* out) {
  return with_vm(vm, [&](tsr_vm& m) {
    if (!out) return null_argument(m, "out");
    out->id = 0;
    const int raw = raw_enum(format);
    if (raw != TSR_STATS_TEXT && raw != TSR_STATS_JSON)
      return m.fail(TSR_EINVAL, "unknown stats format " + std::to_string(raw));
    // Before the first run the report is of the parameters alone; reading
    // it does not fix them (tsr_set_jit_param still works).
    std::unique_ptr<HotspotObserver> not_started;
    if (!m.started) not_started = std::make_unique<HotspotObserver>(m.params);
    const HotspotObserver& observer = m.started ? *m.observer : *not_started;
    const double wall_ms =
        m.started ? std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - m.started_at).count() : 0;
    std::string text;
    if (raw == TSR_STATS_TEXT) {
      std::ostringstream os;
      observer.print_stats(os, wall_ms / 1000,
                           "since the VM first ran code: the host's runs and " + std::to_string(m.counters.host_calls) +
                               " calls, and its own time between them");
      const EmbedCounters& c = m.counters;
      os << "embedding: " << c.host_calls << " host calls, " << c.host_function_calls
         << " host function calls, " << c.tensors_wrapped << " tensors shared without a copy, "
         << c.tensors_exported << " exported, " << c.tensor_bytes_copied << " tensor bytes copied, "
         << m.handles.live() << " live handles\n";
      const ListHeap::Stats& gc = m.vm->list_heap().stats();
      os << "  cycle collector: " << gc.collections << " collections, " << gc.lists_freed << " lists in cycles freed\n";
      text = std::move(os).str();
    } else {
      // run_metrics' lines: the run, then one per hot loop.
      const std::string lines = run_metrics_lines(observer, RunOutcome{"<embedded>", 0, wall_ms},
                                                  m.events ? m.events->tally() : nullptr);
      std::istringstream in(lines);
      std::string line, run, loops;
      while (std::getline(in, line)) {
        if (line.empty()) continue;
        if (run.empty()) run = line;
        else loops += (loops.empty() ? "" : ",") + line;
      }
      text = "{\"run\":" + (run.empty() ? std::string("null") : run) + ",\"loops\":[" + loops +
             "],\"embedding\":" + counters_json(m) + "}";
    }
    return give(m, make_str(text), out);
  });
}

tsr_status tsr_stat(tsr_vm* vm, const char* name, int64_t* out) {
  return with_vm(vm, [&](tsr_vm& m) {
    if (!name) return null_argument(m, "name");
    if (!out) return null_argument(m, "out");
    const EmbedCounters& c = m.counters;
    const std::string n = name;
    const jit::TraceJit* tj = m.observer ? m.observer->tracing() : nullptr;
    const jit::TraceStats* ts = tj ? &tj->stats() : nullptr;
    if (n == "host_calls") *out = c.host_calls;
    else if (n == "host_function_calls") *out = c.host_function_calls;
    else if (n == "tensor_bytes_copied") *out = c.tensor_bytes_copied;
    else if (n == "tensors_wrapped") *out = c.tensors_wrapped;
    else if (n == "tensors_exported") *out = c.tensors_exported;
    else if (n == "live_handles") *out = static_cast<int64_t>(m.handles.live());
    else if (n == "traces") *out = ts ? static_cast<int64_t>(ts->recorded) : 0;
    else if (n == "compiled_traces") *out = ts ? static_cast<int64_t>(ts->compiled) : 0;
    else if (n == "trace_exits") *out = tj ? static_cast<int64_t>(tj->exits_taken()) : 0;
    else
      return m.fail(TSR_ENOTFOUND, "unknown statistic '" + n +
                                       "' (known: host_calls, host_function_calls, tensor_bytes_copied, "
                                       "tensors_wrapped, tensors_exported, live_handles, traces, compiled_traces, "
                                       "trace_exits)");
    return m.ok();
  });
}

}  // extern "C"
