#include "runtime/jit_event_log.h"

#include <fmt/format.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>

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

JitEventLog::~JitEventLog() { flush(); }

void JitEventLog::log_to(std::ostream& os) {
  std::lock_guard<std::mutex> lock(mu_);
  text_file_.reset();
  text_ = &os;
}

void JitEventLog::log_to_file(const std::string& path) {
  auto f = std::make_unique<std::ofstream>(open_or_throw(path, "--jit-log"));
  std::lock_guard<std::mutex> lock(mu_);
  text_file_ = std::move(f);
  text_ = text_file_.get();
}

void JitEventLog::write_jsonl(const std::string& path) {
  std::ofstream f = open_or_throw(path, "--dump:");
  std::lock_guard<std::mutex> lock(mu_);
  jsonl_ = std::move(f);
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
  if (text_) *text_ << line(ms, k, fields) << '\n';
  if (jsonl_.is_open()) {
    nlohmann::ordered_json j;
    j["time_ms"] = std::round(ms * 1000) / 1000;  // since the run began ("ms" is a field of some events)
    j["event"] = jit_event_info(k).name;
    j["thread"] = vm ? "vm" : "background";
    for (auto& [key, value] : fields) std::visit([&j, &key](auto& v) { j[key] = v; }, value);
    jsonl_ << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  }
}

void JitEventLog::kernel_event(std::string_view name, EventFields fields) {
  const std::optional<JitEventKind> k = jit_event_by_name(name);
  if (!k) throw std::logic_error(fmt::format("kernel event '{}' is not in runtime/jit_events.def", name));
  emit(*k, std::move(fields));
}

uint64_t JitEventLog::count(JitEventKind k) const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_[static_cast<size_t>(k)];
}

void JitEventLog::flush() {
  std::lock_guard<std::mutex> lock(mu_);
  if (text_) text_->flush();
  if (jsonl_.is_open()) jsonl_.flush();
}

}  // namespace tessera::jit
