// JitEventLog: the JIT's events as they happen (the table in
// jit_events.def), for people and for programs:
//   - --jit-log[=FILE]: one line per event, in LuaJIT -jv's spirit:
//       [jit 12.345] trace.stop trace=3 kind=loop at=loop.tsb:4 ir=41 link=self
//     the milliseconds since the run began, the event's name, then its
//     fields as key=value (a text with spaces or quotes is quoted);
//   - --dump DIR: events.jsonl, one JSON object per event (nlohmann-json):
//       {"time_ms":12.345,"event":"trace.stop","thread":"vm","trace":3,...}
//     and, at the end, each trace's taken exits (exit.count).
// With neither, on() is false and the JIT does not build the events at all.
// Thread-safe: the background compilers report kernels too.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "codegen/kernel/kernel_events.h"
#include "runtime/jit_timeline.h"
#include "runtime/kernel_call_tally.h"

namespace tessera::jit {

using kir::EventFields;
using kir::EventValue;

enum class JitEventKind : uint8_t {
#define JIT_EVENT(id, name, description) id,
#include "runtime/jit_events.def"
#undef JIT_EVENT
};
constexpr size_t kNumJitEvents = 0
#define JIT_EVENT(id, name, description) +1
#include "runtime/jit_events.def"
#undef JIT_EVENT
    ;

struct JitEventInfo {
  const char* name;
  const char* description;
};
const JitEventInfo& jit_event_info(JitEventKind k);
std::optional<JitEventKind> jit_event_by_name(std::string_view name);

class JitEventLog {
 public:
  JitEventLog();  // the clock starts
  ~JitEventLog();

  // Lines go to `os` (not owned: it must outlive the log, whose destructor
  // flushes it; stderr for --jit-log).
  void log_to(std::ostream& os);
  // Lines go to a file (--jit-log=FILE); throws std::runtime_error with the
  // reason when it cannot be written.
  void log_to_file(const std::string& path);
  // JSON lines go to `path` (DIR/events.jsonl); throws as log_to_file.
  void write_jsonl(const std::string& path);
  // Keeps a timeline (jit_timeline.h), written to `path` by finish(); throws
  // as log_to_file when `path` cannot be written.
  void keep_timeline(const std::string& path, std::string process_name, JitTimeline::Limits limits = {});
  JitTimeline* timeline() { return timeline_.get(); }
  // Sums the fused calls per kernel (--metrics, --dump's viewer); the JIT
  // times each call and each entry into compiled code from then on. Once.
  void keep_tally();
  const KernelCallTally* tally() const { return tally_.get(); }
  // Whether calls and trace runs are timed (a timeline or a tally is kept).
  bool timing() const { return timeline_ != nullptr || tally_ != nullptr; }
  // The end of the run: writes the timeline (once; the destructor does it
  // if nobody did) and flushes. Throws std::runtime_error on a write error,
  // of the timeline or of any line before (the log's, events.jsonl's).
  void finish();

  bool on() const { return text_ != nullptr || jsonl_.is_open() || timing(); }
  void emit(JitEventKind k, EventFields fields);
  // Whether it wants a span per fused call as it runs (the timeline, the tally).
  bool wants_spans() const { return timing(); }
  // A fused call's span (or a GPU launch's time on the device).
  void kernel_span(std::string_view name, const kir::KernelSpan& span);
  // Events emitted so far, by kind (what tests compare with --stats).
  uint64_t count(JitEventKind k) const;
  // Lines are flushed as they are written (a file holds every event so far
  // at any time, also when the process is killed); flush() is for stderr.
  void flush();

  // The --jit-log line of an event (without the newline).
  static std::string line(double ms, JitEventKind k, const EventFields& fields);

 private:
  void to_timeline(JitEventKind k, bool vm, const EventFields& fields);  // under mu_
  // Notes the first failed write of `os` (under mu_): finish() reports it.
  void check_written(std::ostream& os, const std::string& what);

  mutable std::mutex mu_;
  std::chrono::steady_clock::time_point start_;
  std::thread::id vm_thread_;
  std::ostream* text_ = nullptr;
  std::unique_ptr<std::ofstream> text_file_;
  std::ofstream jsonl_;
  std::unique_ptr<JitTimeline> timeline_;
  std::unique_ptr<KernelCallTally> tally_;
  std::string timeline_path_, process_name_;
  std::string text_path_, jsonl_path_;  // how a write error names them
  std::string write_error_;  // the first failed write, for finish()
  bool finished_ = false;
  std::array<uint64_t, kNumJitEvents> counts_{};
};

}  // namespace tessera::jit
