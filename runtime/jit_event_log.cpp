#include "runtime/jit_event_log.h"

#include <fmt/format.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>

#include "runtime/jit_clock.h"
#include "runtime/quoted_text.h"

namespace tessera::jit {

namespace {

constexpr JitEventInfo kEvents[] = {
#define JIT_EVENT(id, name, description) {name, description},
#include "runtime/jit_events.def"
#undef JIT_EVENT
};

// key=value; a text that is empty or holds a space, a quote or '=' is quoted.
void append_value(std::string& out, const EventValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    out += std::to_string(*i);
  } else if (const auto* d = std::get_if<double>(&v)) {
    out += fmt::format("{:.3f}", *d);
  } else {
    const std::string& s = std::get<std::string>(v);
    if (!s.empty() && s.find_first_of(" \"=\t\n") == std::string::npos) {
      out += s;
      return;
    }
    out += quoted_text(s);
  }
}

std::ofstream open_or_throw(const std::string& path, const char* what) {
  std::ofstream f(path, std::ios::out | std::ios::trunc);
  if (!f) throw std::runtime_error(fmt::format("{} {}: cannot be written ({})", what, path, std::strerror(errno)));
  return f;
}

}  // namespace

const JitEventInfo& jit_event_info(JitEventKind k) { return kEvents[static_cast<size_t>(k)]; }

std::optional<JitEventKind> jit_event_by_name(std::string_view name) {
  for (size_t i = 0; i < kNumJitEvents; ++i)
    if (name == kEvents[i].name) return static_cast<JitEventKind>(i);
  return std::nullopt;
}

JitEventLog::JitEventLog() : start_(std::chrono::steady_clock::now()), vm_thread_(std::this_thread::get_id()) {}

JitEventLog::~JitEventLog() {
  try {
    finish();
  } catch (const std::exception&) {
    // finish() was the place to report it
  }
}

void JitEventLog::keep_timeline(const std::string& path, std::string process_name, JitTimeline::Limits limits) {
  open_or_throw(path, "--dump:");  // fails now rather than at the end of the run
  timeline_ = std::make_unique<JitTimeline>(std::chrono::duration<double, std::milli>(start_.time_since_epoch()).count(),
                                            limits);
  timeline_path_ = path;
  process_name_ = std::move(process_name);
}

void JitEventLog::finish() {
  flush();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!write_error_.empty()) throw std::runtime_error(write_error_);
  }
  if (!timeline_ || finished_) return;
  finished_ = true;
  timeline_->write(timeline_path_, process_name_, now_ms());
}

void JitEventLog::check_written(std::ostream& os, const std::string& what) {
  if (os || !write_error_.empty()) return;
  write_error_ = fmt::format("{}: a write failed ({}); the file lacks events from {:.3f} ms on", what,
                             errno ? std::strerror(errno) : "stream error",
                             std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count());
}

void JitEventLog::keep_tally() {
  if (!tally_) tally_ = std::make_unique<KernelCallTally>();
}

void JitEventLog::kernel_span(std::string_view name, const kir::KernelSpan& span) {
  if (tally_)
    tally_->add(name, span.gpu ? "gpu" : "cpu", span.end_ms - span.start_ms,
                static_cast<uint64_t>(span.bytes), static_cast<uint64_t>(span.flops));
  if (!timeline_) return;
  // A GPU kernel's time on the device has a track of its own.
  const JitTimeline::Track track = span.on_device                              ? JitTimeline::Track::Device
                                   : std::this_thread::get_id() == vm_thread_ ? JitTimeline::Track::VM
                                                                              : JitTimeline::Track::KernelCompiler;
  timeline_->kernel_span(track, name, span);
}

void JitEventLog::log_to(std::ostream& os) {
  std::lock_guard<std::mutex> lock(mu_);
  text_file_.reset();
  text_ = &os;
  text_path_ = "--jit-log (standard error)";
}

void JitEventLog::log_to_file(const std::string& path) {
  auto f = std::make_unique<std::ofstream>(open_or_throw(path, "--jit-log"));
  std::lock_guard<std::mutex> lock(mu_);
  text_file_ = std::move(f);
  text_ = text_file_.get();
  text_path_ = "--jit-log " + path;
}

void JitEventLog::write_jsonl(const std::string& path) {
  std::ofstream f = open_or_throw(path, "--dump:");
  std::lock_guard<std::mutex> lock(mu_);
  jsonl_ = std::move(f);
  jsonl_path_ = "--dump: " + path;
}

std::string JitEventLog::line(double ms, JitEventKind k, const EventFields& fields) {
  std::string out = fmt::format("[jit {:.3f}] {}", ms, jit_event_info(k).name);
  for (const auto& [key, value] : fields) {
    out += ' ';
    out += key;
    out += '=';
    append_value(out, value);
  }
  return out;
}

void JitEventLog::emit(JitEventKind k, EventFields fields) {
  const bool vm = std::this_thread::get_id() == vm_thread_;
  std::lock_guard<std::mutex> lock(mu_);  // before the clock: the lines' times never go back
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  ++counts_[static_cast<size_t>(k)];
  if (text_) {
    *text_ << line(ms, k, fields) << '\n';
    text_->flush();  // a line per event as it happens, also for a run that is killed
    check_written(*text_, text_path_);
  }
  if (jsonl_.is_open()) {
    nlohmann::ordered_json j;
    j["time_ms"] = std::round(ms * 1000) / 1000;  // since the run began ("ms" is a field of some events)
    j["event"] = jit_event_info(k).name;
    j["thread"] = vm ? "vm" : "background";
    for (auto& [key, value] : fields) std::visit([&j, &key](auto& v) { j[key] = v; }, value);
    jsonl_ << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    jsonl_.flush();
    check_written(jsonl_, jsonl_path_);
  }
  if (timeline_) to_timeline(k, vm, fields);
}

// An event on the timeline: a kernel compile as the span it took, on the
// track of the thread that did it; anything else as an instant.
void JitEventLog::to_timeline(JitEventKind k, bool vm, const EventFields& fields) {
  const double end = now_ms();
  auto field = [&](const char* key) -> const EventValue* {
    for (const auto& [name, value] : fields)
      if (name == key) return &value;
    return nullptr;
  };
  const EventValue* device = field("device");
  const bool gpu = device && std::holds_alternative<std::string>(*device) && std::get<std::string>(*device) == "gpu";
  const JitTimeline::Track track = vm ? JitTimeline::Track::VM
                                   : gpu ? JitTimeline::Track::Gpu
                                         : JitTimeline::Track::KernelCompiler;
  const EventValue* ms = field("ms");
  if (k == JitEventKind::KernelCompiled && ms && std::holds_alternative<double>(*ms)) {
    const EventValue* tier = field("tier");
    timeline_->span(track, "kernel compile " + (tier ? std::get<std::string>(*tier) : std::string()), "kernel",
                    end - std::get<double>(*ms), end, fields);
    return;
  }
  if (k == JitEventKind::TraceCompiled) return;  // the telemetry's span has it
  timeline_->instant(track, jit_event_info(k).name, "jit", end, fields);
}

uint64_t JitEventLog::count(JitEventKind k) const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_[static_cast<size_t>(k)];
}

void JitEventLog::flush() {
  std::lock_guard<std::mutex> lock(mu_);
  if (text_) {
    text_->flush();
    check_written(*text_, text_path_);
  }
  if (jsonl_.is_open()) {
    jsonl_.flush();
    check_written(jsonl_, jsonl_path_);
  }
}

}  // namespace tessera::jit
