#include "runtime/jit_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "vm/core/text_file.h"

namespace tessera::jit {

namespace {

const char* track_name(JitTimeline::Track t) {
  switch (t) {
    case JitTimeline::Track::VM: return "VM (interpreter, recording, T1, compiled traces, kernels)";
    case JitTimeline::Track::Compiler: return "LLVM compiler (T2, background)";
    case JitTimeline::Track::KernelCompiler: return "kernel compiler (K3, background)";
    case JitTimeline::Track::Gpu: return "GPU kernel builds (background)";
    case JitTimeline::Track::Device: return "GPU device (kernels as they ran)";
    case JitTimeline::Track::Collectives: return "collectives (all_reduce, barrier, send, ... of this rank)";
  }
  return "?";
}

}  // namespace

void JitTimeline::span(Track track, std::string_view name, const char* category, double start_ms, double end_ms,
                       kir::EventFields args) noexcept {
  add({'X', track, category, std::max(0.0, (start_ms - origin_ms_) * 1000), std::max(0.0, (end_ms - start_ms) * 1000),
       std::move(args), {}, {}},
      name);
}

void JitTimeline::instant(Track track, std::string_view name, const char* category, double at_ms,
                          kir::EventFields args) noexcept {
  add({'i', track, category, std::max(0.0, (at_ms - origin_ms_) * 1000), 0, std::move(args), {}, {}}, name);
}

void JitTimeline::span(Track track, std::string_view name, const char* category, double start_ms, double end_ms,
                       const SmallArgs& args) noexcept {
  add({'X', track, category, std::max(0.0, (start_ms - origin_ms_) * 1000), std::max(0.0, (end_ms - start_ms) * 1000),
       {}, args, {}},
      name);
}

void JitTimeline::instant(Track track, std::string_view name, const char* category, double at_ms,
                          const SmallArgs& args) noexcept {
  add({'i', track, category, std::max(0.0, (at_ms - origin_ms_) * 1000), 0, {}, args, {}}, name);
}

void JitTimeline::kernel_span(Track track, std::string_view name, const kir::KernelSpan& k) noexcept {
  Event e{'X', track, k.on_device ? "gpu" : "kernel", std::max(0.0, (k.start_ms - origin_ms_) * 1000),
          std::max(0.0, (k.end_ms - k.start_ms) * 1000), {}, {}, {}};
  SmallArgs& args = e.small;
  if (k.on_device) args.add("track", "device");
  args.add("device", k.gpu ? "gpu" : "cpu");
  if (k.tier) args.add("tier", k.tier);
  if (k.ops >= 0) args.add("ops", k.ops);
  if (k.blocks >= 0) args.add("blocks", k.blocks);
  args.add("bytes", k.bytes);
  if (!k.on_device) args.add("flops", k.flops);
  add(std::move(e), name);
}

void JitTimeline::linked_span(Track track, std::string_view name, int group, const char* category, double start_ms,
                              double end_ms, const SmallArgs& args, Flow flow) noexcept {
  add({'X', track, category, std::max(0.0, (start_ms - origin_ms_) * 1000), std::max(0.0, (end_ms - start_ms) * 1000),
       {}, args, flow},
      name, group);
}

void JitTimeline::set_rank(int rank, int size) {
  std::lock_guard<std::mutex> lock(mu_);
  rank_ = rank;
  world_size_ = size;
}

// Under mu_. A loop's events come from a few sites (a trace's span, its
// exit, a kernel): the recent ones are found without hashing their names.
JitTimeline::Site* JitTimeline::site_of(Track track, char phase, int group, std::string_view name) {
  for (Site* r : recent_)
    if (r && r->track == track && r->phase == phase && r->group == group && r->name == name) return r;
  Site* site = nullptr;
  if (auto it = index_.find(SiteKey{track, phase, group, name}); it != index_.end()) {
    site = it->second;
  } else {
    if (sites_.size() >= limits_.max_sites) return nullptr;
    auto s = std::make_unique<Site>();
    s->track = track;
    s->phase = phase;
    s->group = group;
    s->name = std::string(name);
    s->first.reserve(std::min<size_t>(limits_.keep, 16));
    site = s.get();
    sites_.push_back(std::move(s));
    index_.emplace(SiteKey{track, phase, group, site->name}, site);
  }
  recent_[next_recent_] = site;
  next_recent_ = (next_recent_ + 1) % recent_.size();
  return site;
}

void JitTimeline::add(Event&& e, std::string_view name, int group) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    Site* site = site_of(e.track, e.phase, group, name);
    if (!site) {
      ++unsited_;
      return;
    }
    if (site->first.size() < limits_.keep) {
      site->first.push_back(std::move(e));
    } else if (site->last.size() < limits_.keep) {
      site->last.push_back(std::move(e));
    } else {
      // The ring is full: its oldest event is left out, and counted.
      Event& old = site->last[site->next];
      if (site->left_out == 0) site->gap_start_us = old.ts_us;
      site->gap_end_us = std::max(site->gap_end_us, old.ts_us + old.dur_us);
      ++site->left_out;
      site->left_out_us += old.dur_us;
      old = std::move(e);
      if (++site->next == site->last.size()) site->next = 0;
    }
  } catch (const std::exception&) {
    ++unsited_;  // out of memory: counted, and the run goes on
  }
}

size_t JitTimeline::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& s : sites_) n += s->first.size() + s->last.size();
  return n;
}

std::string JitTimeline::json(const std::string& process_name, double end_ms) const {
  struct Row {
    const Site* site;
    const Event* event;  // null: the site's `left out` instant
    double ts_us, dur_us;
    bool flow;  // the event's piece of its flow (at the middle of its span)
  };
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Row> rows;
  // The tracks that have events: only those are named (drawn), so that a
  // run with no GPU shows no GPU tracks, nor one without collectives theirs.
  std::set<Track> used{Track::VM};  // the run's span is there
  auto push = [&rows](const Site* s, const Event& e) {
    rows.push_back({s, &e, e.ts_us, e.dur_us, false});
    if (e.flow.phase) rows.push_back({s, &e, e.ts_us + e.dur_us / 2, 0, true});
  };
  for (const auto& s : sites_) {
    used.insert(s->track);
    for (const Event& e : s->first) push(s.get(), e);
    for (size_t k = 0; k < s->last.size(); ++k) push(s.get(), s->last[(s->next + k) % s->last.size()]);
    if (s->left_out) rows.push_back({s.get(), nullptr, s->gap_start_us, 0, false});
  }
  // By start time; at equal starts the longer span first, so that spans nest.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.ts_us != b.ts_us ? a.ts_us < b.ts_us : a.dur_us > b.dur_us;
  });
  const int pid = rank_ >= 0 ? rank_ + 1 : 1;
  nlohmann::ordered_json out;
  auto& list = out["traceEvents"] = nlohmann::ordered_json::array();
  auto meta = [&](const char* what, int tid, const char* key, const nlohmann::ordered_json& value) {
    list.push_back({{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"ts", 0}, {"args", {{key, value}}}});
  };
  meta("process_name", 1, "name", process_name);
  if (rank_ >= 0) meta("process_sort_index", 1, "sort_index", rank_);
  for (Track t : {Track::VM, Track::Compiler, Track::KernelCompiler, Track::Gpu, Track::Device, Track::Collectives})
    if (used.count(t)) meta("thread_name", static_cast<int>(t), "name", track_name(t));
  list.push_back({{"ph", "X"}, {"name", "run"}, {"cat", "run"}, {"pid", pid}, {"tid", static_cast<int>(Track::VM)},
                  {"ts", 0}, {"dur", std::max(0.0, (end_ms - origin_ms_) * 1000)}});
  for (const Row& r : rows) {
    const Site& s = *r.site;
    const int tid = static_cast<int>(s.track);
    if (!r.event) {
      const char* kinds = s.phase == 'X' ? "spans" : "instants";
      list.push_back({{"ph", "i"},
                      {"name", fmt::format("{}: {} {} left out", s.name, s.left_out, kinds)},
                      {"cat", "left out"},
                      {"pid", pid},
                      {"tid", tid},
                      {"ts", r.ts_us},
                      {"s", "t"},
                      {"args",
                       {{"left_out", s.left_out},
                        {"left_out_ms", s.left_out_us / 1000},
                        {"until_ms", s.gap_end_us / 1000}}}});
      continue;
    }
    const Event& e = *r.event;
    if (r.flow) {
      list.push_back({{"ph", std::string(1, e.flow.phase)}, {"name", e.flow.name}, {"cat", e.category},
                      {"id", e.flow.id}, {"pid", pid}, {"tid", tid}, {"ts", r.ts_us}, {"bp", "e"}});
      continue;
    }
    nlohmann::ordered_json j = {{"ph", std::string(1, e.phase)}, {"name", s.name}, {"cat", e.category},
                                {"pid", pid}, {"tid", tid}, {"ts", e.ts_us}};
    if (e.phase == 'X') j["dur"] = e.dur_us;
    if (e.phase == 'i') j["s"] = "t";  // an instant of its thread
    if (!e.args.empty() || e.small.size()) {
      nlohmann::ordered_json args = nlohmann::ordered_json::object();
      for (const auto& [k, v] : e.args) std::visit([&args, &k](const auto& x) { args[k] = x; }, v);
      for (size_t i = 0; i < e.small.size(); ++i) {
        if (e.small.text(i)) args[e.small.key(i)] = e.small.text(i);
        else args[e.small.key(i)] = e.small.value(i);
      }
      j["args"] = std::move(args);
    }
    list.push_back(std::move(j));
  }
  out["displayTimeUnit"] = "ms";
  // What was left out, for a reader and for programs (Perfetto shows it as
  // the trace's metadata).
  auto& other = out["otherData"] = nlohmann::ordered_json::object();
  uint64_t total = unsited_;
  auto sites = nlohmann::ordered_json::array();
  for (const auto& s : sites_) {
    total += s->left_out;
    if (s->left_out)
      sites.push_back({{"name", s->name}, {"track", track_name(s->track)}, {"left_out", s->left_out},
                       {"left_out_ms", s->left_out_us / 1000}});
  }
  other["kept_per_site"] = fmt::format("the first {} and the last {} events of each site", limits_.keep, limits_.keep);
  other["events_left_out"] = total;
  other["events_of_sites_not_kept"] = unsited_;
  other["sites_with_events_left_out"] = std::move(sites);
  other["steady_clock_origin_ms"] = origin_ms_;
  if (rank_ >= 0) {
    other["rank"] = rank_;
    other["world_size"] = world_size_;
  }
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void JitTimeline::write(const std::string& path, const std::string& process_name, double end_ms) const {
  if (auto error = write_text_file(path, json(process_name, end_ms) + "\n")) throw std::runtime_error("--dump: " + *error);
}

}  // namespace tessera::jit
