// JitTimeline: a run as a timeline in the Chrome trace event format
// (--dump DIR/timeline.json), which Perfetto (ui.perfetto.dev) and
// chrome://tracing open. Tracks (threads of one process):
//   - VM: the run; recording (from record.start to the trace's stop or
//     abort); T1 compiles and, with async=0, T2 compiles; each entry into
//     compiled code (a span per run_trace, its exit as an instant: deopt);
//     the fused calls' kernels as they run and their K2 compiles;
//   - LLVM (T2): the background compiles of T2 code, from start to end;
//   - kernel compiler: K3 compiles and tuning on the background thread;
//   - GPU kernel builds: the GPU's kernel builds (the background thread);
//   - GPU device: each GPU kernel as it ran on the device (timed with CUDA
//     events, so these launches wait for the device);
//   - collectives: this rank's all_reduce, barrier, send, ... (the runtime's
//     observer of process_collectives(), world_timeline.h), each span with
//     its piece of the flow that links the same collective across ranks.
// Every other JIT event is an instant on the VM track. Events are kept in
// memory and written once, sorted by time (so the times of each track never
// go back), at the end of the run.
//
// Memory is bounded whatever the run's length: events are grouped by site
// (a track, a phase and a name: one kernel, one trace, one kind of instant;
// and a group: a send's or recv's peer),
// and of each site only the first `keep` events and the last `keep` are
// kept; those between are counted, with the time their spans took. The
// written timeline says what it left out: an instant `... left out` on the
// site's track where the gap begins, and the totals in `otherData`. At most
// `max_sites` sites are kept; the events of later ones are only counted.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "codegen/kernel/kernel_events.h"

namespace tessera::jit {

// What a timeline keeps (--dump-keep sets `keep`).
struct JitTimelineLimits {
  size_t keep = 256;        // events kept at the start, and at the end, of each site
  size_t max_sites = 4096;  // sites kept; later ones are counted only
};

class JitTimeline {
 public:
  enum class Track : int { VM = 1, Compiler = 2, KernelCompiler = 3, Gpu = 4, Device = 5, Collectives = 6 };
  using Limits = JitTimelineLimits;

  // `origin_ms`: the steady-clock time (now_ms()) the timeline starts at.
  explicit JitTimeline(double origin_ms, Limits limits = {}) : origin_ms_(origin_ms), limits_(limits) {}

  // A span [start_ms, end_ms] (steady-clock times, as now_ms()). Never
  // throws: an event that cannot be kept (out of memory) is counted as left
  // out.
  void span(Track track, std::string_view name, const char* category, double start_ms, double end_ms,
            kir::EventFields args = {}) noexcept;
  void instant(Track track, std::string_view name, const char* category, double at_ms,
               kir::EventFields args = {}) noexcept;
  // Up to 7 args whose keys and texts are static strings: what the events
  // of hot paths (a span per fused call, per entry into compiled code, an
  // instant per exit) carry, kept without allocating.
  class SmallArgs {
   public:
    SmallArgs& add(const char* key, int64_t value) { return put(key, value, nullptr); }
    SmallArgs& add(const char* key, const char* text) { return put(key, 0, text); }
    size_t size() const { return n_; }
    const char* key(size_t i) const { return keys_[i]; }
    const char* text(size_t i) const { return texts_[i]; }  // null: an int
    int64_t value(size_t i) const { return values_[i]; }

   private:
    static constexpr size_t kMax = 7;
    SmallArgs& put(const char* key, int64_t value, const char* text) {
      if (n_ < kMax) {
        keys_[n_] = key;
        values_[n_] = value;
        texts_[n_++] = text;
      }
      return *this;
    }
    const char* keys_[kMax] = {};
    const char* texts_[kMax] = {};
    int64_t values_[kMax] = {};
    size_t n_ = 0;
  };
  void span(Track track, std::string_view name, const char* category, double start_ms, double end_ms,
            const SmallArgs& args) noexcept;
  void instant(Track track, std::string_view name, const char* category, double at_ms, const SmallArgs& args) noexcept;
  // A fused call's span (category "kernel", or "gpu" on the device track).
  void kernel_span(Track track, std::string_view name, const kir::KernelSpan& span) noexcept;
  // A piece of a Chrome trace flow (ph "s", "t" or "f", with "bp": "e": it
  // binds to the span it comes with), written at the middle of that span:
  // the pieces of one id, in time order, are drawn as arrows from span to
  // span (across processes too). `name` is a static string; the pieces of
  // one flow share it, their category and `id`.
  struct Flow {
    char phase = 0;  // 's' starts the flow, 't' steps, 'f' ends it; 0: none
    uint64_t id = 0;
    const char* name = nullptr;
  };
  // A span with its piece of a flow. `group` splits one name's events into
  // sites of their own (each kept apart under the limits): a send's spans
  // per peer, so that the first and last `keep` of each pair are kept.
  void linked_span(Track track, std::string_view name, int group, const char* category, double start_ms,
                   double end_ms, const SmallArgs& args, Flow flow) noexcept;

  // Under mpirun: this timeline is rank `rank`'s of `size`. It is then the
  // process pid rank + 1 (Perfetto treats pid 0 as the kernel's idle
  // process), sorted by rank, and otherData has "rank" and "world_size".
  void set_rank(int rank, int size);

  // The whole trace-event JSON ({"traceEvents": [...], "displayTimeUnit": "ms",
  // "otherData": {...}}), with the process's and tracks' names; `end_ms`
  // closes the run's span. otherData's "steady_clock_origin_ms" is the
  // origin on this process's steady clock (what merging ranks aligns).
  std::string json(const std::string& process_name, double end_ms) const;
  // Writes json() to `path`; throws std::runtime_error when it cannot.
  void write(const std::string& path, const std::string& process_name, double end_ms) const;
  // Events kept (written ones are counted in the file's otherData).
  size_t size() const;

 private:
  struct Event {
    char phase;  // 'X' complete, 'i' instant
    Track track;
    const char* category;
    double ts_us, dur_us;
    kir::EventFields args;
    SmallArgs small;  // written after args
    Flow flow;
  };
  // One site's events: `first` until it holds `keep`, then `last` as a ring
  // (`next` its oldest entry) whose evictions are counted in `left_out`.
  struct Site {
    Track track;
    char phase;
    int group;
    std::string name;
    std::vector<Event> first, last;
    size_t next = 0;
    uint64_t left_out = 0;
    double left_out_us = 0;                  // the time the left-out spans took
    double gap_start_us = 0, gap_end_us = 0;  // from the first left out to the last
  };
  struct SiteKey {
    Track track;
    char phase;
    int group;
    std::string_view name;  // the Site's own name, or the caller's for a lookup
    bool operator==(const SiteKey&) const = default;
  };
  struct SiteKeyHash {
    size_t operator()(const SiteKey& k) const {
      return std::hash<std::string_view>()(k.name) ^ (static_cast<size_t>(k.track) << 8) ^
             static_cast<size_t>(k.phase) ^ (static_cast<size_t>(k.group) << 16);
    }
  };

  Site* site_of(Track track, char phase, int group, std::string_view name);  // null: past max_sites
  void add(Event&& e, std::string_view name, int group = 0) noexcept;

  double origin_ms_;
  Limits limits_;
  int rank_ = -1, world_size_ = 0;  // set_rank's; -1: not a rank of a world
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Site>> sites_;  // stable addresses: the index's keys view their names
  std::unordered_map<SiteKey, Site*, SiteKeyHash> index_;
  std::array<Site*, 4> recent_{};  // sites of recent events, round-robin
  size_t next_recent_ = 0;
  uint64_t unsited_ = 0;  // events of sites past max_sites (or not kept for want of memory)
};

}  // namespace tessera::jit
