#include "runtime/jit_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace tessera::jit {

namespace {

const char* track_name(JitTimeline::Track t) {
  switch (t) {
    case JitTimeline::Track::VM: return "VM (interpreter, recording, T1, compiled traces, kernels)";
    case JitTimeline::Track::Compiler: return "LLVM compiler (T2, background)";
    case JitTimeline::Track::KernelCompiler: return "kernel compiler (K3, background)";
    case JitTimeline::Track::Gpu: return "GPU kernel builds (background)";
    case JitTimeline::Track::Device: return "GPU device (kernels as they ran)";
  }
  return "?";
}

}  // namespace

void JitTimeline::span(Track track, std::string name, const char* category, double start_ms, double end_ms,
                       kir::EventFields args) {
  const double ts = (start_ms - origin_ms_) * 1000;
  const double dur = std::max(0.0, (end_ms - start_ms) * 1000);
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back({'X', track, std::move(name), category, std::max(0.0, ts), dur, std::move(args)});
}

void JitTimeline::instant(Track track, std::string name, const char* category, double at_ms, kir::EventFields args) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back({'i', track, std::move(name), category, std::max(0.0, (at_ms - origin_ms_) * 1000), 0,
                     std::move(args)});
}

size_t JitTimeline::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_.size();
}

std::string JitTimeline::json(const std::string& process_name, double end_ms) const {
  std::vector<Event> events;
  {
    std::lock_guard<std::mutex> lock(mu_);
    events = events_;
  }
  // By start time; at equal starts the longer span first, so that spans nest.
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.ts_us != b.ts_us ? a.ts_us < b.ts_us : a.dur_us > b.dur_us;
  });
  nlohmann::ordered_json out;
  auto& list = out["traceEvents"] = nlohmann::ordered_json::array();
  auto meta = [&](const char* what, int tid, const std::string& name) {
    list.push_back({{"ph", "M"}, {"name", what}, {"pid", 1}, {"tid", tid}, {"ts", 0}, {"args", {{"name", name}}}});
  };
  meta("process_name", 1, process_name);
  for (Track t : {Track::VM, Track::Compiler, Track::KernelCompiler, Track::Gpu, Track::Device})
    meta("thread_name", static_cast<int>(t), track_name(t));
  list.push_back({{"ph", "X"}, {"name", "run"}, {"cat", "run"}, {"pid", 1}, {"tid", static_cast<int>(Track::VM)},
                  {"ts", 0}, {"dur", std::max(0.0, (end_ms - origin_ms_) * 1000)}});
  for (const Event& e : events) {
    nlohmann::ordered_json j = {{"ph", std::string(1, e.phase)}, {"name", e.name}, {"cat", e.category},
                                {"pid", 1}, {"tid", static_cast<int>(e.track)}, {"ts", e.ts_us}};
    if (e.phase == 'X') j["dur"] = e.dur_us;
    if (e.phase == 'i') j["s"] = "t";  // an instant of its thread
    if (!e.args.empty()) {
      nlohmann::ordered_json args = nlohmann::ordered_json::object();
      for (const auto& [k, v] : e.args) std::visit([&args, &k](const auto& x) { args[k] = x; }, v);
      j["args"] = std::move(args);
    }
    list.push_back(std::move(j));
  }
  out["displayTimeUnit"] = "ms";
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void JitTimeline::write(const std::string& path, const std::string& process_name, double end_ms) const {
  std::ofstream f(path, std::ios::trunc);
  if (!(f << json(process_name, end_ms) << '\n'))
    throw std::runtime_error(fmt::format("--dump: {} cannot be written", path));
}

}  // namespace tessera::jit
