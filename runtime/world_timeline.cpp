#include "runtime/world_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "runtime/comm/process_world.h"
#include "vm/core/text_file.h"

namespace tessera::jit {

namespace {

using json = nlohmann::ordered_json;

double steady_ms(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t.time_since_epoch()).count();
}

bool point_to_point(CollectiveKind k) { return k == CollectiveKind::Send || k == CollectiveKind::Recv; }

std::string rank_dir(const std::string& dir, int rank) {
  return (std::filesystem::path(dir) / fmt::format("rank-{}", rank)).string();
}

std::string read_whole(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot be read");
  std::ostringstream text;
  text << f.rdbuf();
  return text.str();
}

// `s` as HTML text (in an element or an attribute's quotes).
std::string html_text(const std::string& s) {
  static constexpr std::pair<char, const char*> kEntities[] = {
      {'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}};
  std::string out;
  for (char c : s) {
    const auto* e =
        std::find_if(std::begin(kEntities), std::end(kEntities), [c](const auto& x) { return x.first == c; });
    if (e != std::end(kEntities)) out += e->second;
    else out += c;
  }
  return out;
}

// DIR/index.html of a run of several ranks: the merge and each rank's page.
std::string world_index_html(const std::string& script, int ranks) {
  std::string page = fmt::format(
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>tessera-vm run {0}: {1} ranks</title></head>\n"
      "<body>\n<h1>tessera-vm run {0}: {1} ranks</h1>\n"
      "<p><a href=\"timeline.json\">timeline.json</a>: the ranks' timelines merged, a process per rank, each "
      "collective linked across the ranks; open it in <a href=\"https://ui.perfetto.dev\">Perfetto</a> (Open trace "
      "file) or chrome://tracing.</p>\n<ul>\n",
      html_text(script), ranks);
  for (int r = 0; r < ranks; ++r)
    page += fmt::format(
        "<li><a href=\"rank-{0}/index.html\">rank {0}</a>: its trace viewer (its dump, timeline and events are in "
        "rank-{0}/)</li>\n",
        r);
  return page + "</ul>\n</body></html>\n";
}

}  // namespace

uint64_t collective_flow_id(CollectiveKind kind, uint64_t step, int src, int dst) {
  constexpr uint64_t kP2p = 7;  // a tag no CollectiveKind of the others has
  if (point_to_point(kind))
    return (step & ((uint64_t{1} << 26) - 1)) << 27 | (static_cast<uint64_t>(src) & 0xFFF) << 15 |
           (static_cast<uint64_t>(dst) & 0xFFF) << 3 | kP2p;
  return (step & ((uint64_t{1} << 50) - 1)) << 3 | static_cast<uint64_t>(kind);
}

void draw_collective(JitTimeline& tl, const CollectiveRecord& r, int rank, int world_size) noexcept {
  JitTimeline::SmallArgs args;
  args.add("step", static_cast<int64_t>(r.step)).add("bytes", static_cast<int64_t>(r.bytes));
  if (r.peer >= 0) args.add("peer", r.peer);
  args.add("failed", r.failed ? 1 : 0);
  if (r.packed > 1) args.add("all_reduces", static_cast<int64_t>(r.packed));  // a bucket
  JitTimeline::Flow flow;
  int group = 0;
  if (point_to_point(r.kind)) {
    const bool send = r.kind == CollectiveKind::Send;
    flow = {send ? 's' : 'f', collective_flow_id(r.kind, r.step, send ? rank : r.peer, send ? r.peer : rank),
            "send/recv"};
    group = r.peer + 1;  // each peer's messages a site of their own
  } else if (world_size > 1) {
    flow = {rank == 0 ? 's' : rank == world_size - 1 ? 'f' : 't', collective_flow_id(r.kind, r.step, 0, 0),
            collective_name(r.kind)};
  }
  tl.linked_span(JitTimeline::Track::Collectives, collective_name(r.kind), group, "collective", steady_ms(r.start),
                 steady_ms(r.end), args, flow);
}

std::string merge_rank_timelines(const std::vector<RankTimeline>& ranks) {
  const size_t n = ranks.size();
  std::vector<json> docs(n);
  std::vector<double> start_ms(n), used_offset(n);
  for (size_t r = 0; r < n; ++r) {
    try {
      docs[r] = json::parse(ranks[r].json);
      start_ms[r] = docs[r].at("otherData").at("steady_clock_origin_ms").get<double>();
      if (!docs[r].at("traceEvents").is_array()) throw std::runtime_error("traceEvents is not a list");
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("rank {}'s timeline.json is not a timeline ({})", r, e.what()));
    }
    // An offset the measure cannot tell from 0 is 0.
    used_offset[r] = std::abs(ranks[r].offset_ms) <= ranks[r].error_ms ? 0.0 : ranks[r].offset_ms;
    start_ms[r] -= used_offset[r];  // its ts 0 on rank 0's clock
  }
  const double base = n ? *std::min_element(start_ms.begin(), start_ms.end()) : 0.0;

  json out;
  auto& list = out["traceEvents"] = json::array();
  std::vector<json> timed;
  auto clocks = json::array();
  auto per_rank = json::array();
  for (size_t r = 0; r < n; ++r) {
    const double shift_us = (start_ms[r] - base) * 1000;
    for (json& e : docs[r]["traceEvents"]) {
      if (e.value("ph", "") == "M") {
        list.push_back(std::move(e));
        continue;
      }
      e["ts"] = e.value("ts", 0.0) + shift_us;
      timed.push_back(std::move(e));
    }
    clocks.push_back({{"rank", r},
                      {"offset_ms", ranks[r].offset_ms},
                      {"error_ms", ranks[r].error_ms},
                      {"offset_used_ms", used_offset[r]},
                      {"shift_ms", shift_us / 1000}});
    per_rank.push_back(std::move(docs[r]["otherData"]));
  }

  // Each flow's pieces, by time: the first starts it, the last ends it.
  std::map<std::string, std::vector<size_t>> flows;
  for (size_t i = 0; i < timed.size(); ++i) {
    const std::string ph = timed[i].value("ph", "");
    if (ph == "s" || ph == "t" || ph == "f")
      flows[timed[i].value("cat", "") + '\x1f' + timed[i].value("name", "") + '\x1f' + timed[i]["id"].dump()]
          .push_back(i);
  }
  std::vector<char> dropped(timed.size(), 0);
  uint64_t pieces_dropped = 0, linked = 0;
  for (auto& [key, pieces] : flows) {
    if (pieces.size() < 2) {
      for (size_t i : pieces) dropped[i] = 1;
      pieces_dropped += pieces.size();
      continue;
    }
    std::stable_sort(pieces.begin(), pieces.end(),
                     [&](size_t a, size_t b) { return timed[a]["ts"].get<double>() < timed[b]["ts"].get<double>(); });
    for (size_t k = 0; k < pieces.size(); ++k)
      timed[pieces[k]]["ph"] = k == 0 ? "s" : k + 1 == pieces.size() ? "f" : "t";
    ++linked;
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < timed.size(); ++i)
    if (!dropped[i]) order.push_back(i);
  // By time; at equal times the longer span first, so that spans nest.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const double ta = timed[a]["ts"].get<double>(), tb = timed[b]["ts"].get<double>();
    return ta != tb ? ta < tb : timed[a].value("dur", 0.0) > timed[b].value("dur", 0.0);
  });
  for (size_t i : order) list.push_back(std::move(timed[i]));
  out["displayTimeUnit"] = "ms";
  auto& other = out["otherData"] = json::object();
  other["ranks"] = n;
  other["clock_alignment"] =
      "each rank's times on rank 0's steady clock: its offset measured by pings from rank 0 at the end of the run "
      "(Cristian's algorithm, within error_ms); an offset within its error of 0 is taken as 0";
  other["clocks"] = std::move(clocks);
  other["flows"] = linked;
  other["flow_pieces_dropped"] = pieces_dropped;
  other["per_rank"] = std::move(per_rank);
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void finish_world_dump(const std::string& dir, bool ok, const std::string& script) {
  Collectives& world = process_collectives();
  const int rank = world.rank(), size = world.size();
  const std::string merged = (std::filesystem::path(dir) / "timeline.json").string();
  const std::string not_merged =
      fmt::format("--dump: the ranks' timelines are not merged into {} (each rank's is {})", merged,
                  (std::filesystem::path(dir) / "rank-K" / "timeline.json").string());
  if (!ok) throw std::runtime_error(fmt::format("{}: the run failed on rank {}", not_merged, rank));
  try {
    world.barrier();  // every rank that comes here has written its files
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: the barrier at the end of the run failed on rank {}: {}", not_merged,
                                         rank, e.what()));
  }
  std::vector<comm::RankClock> clocks;
  try {
    clocks = comm::measure_clocks();
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}: on rank {}: {}", not_merged, rank, e.what()));
  }
  if (rank != 0) return;
  std::vector<RankTimeline> timelines;
  for (int r = 0; r < size; ++r) {
    const std::string path = (std::filesystem::path(rank_dir(dir, r)) / "timeline.json").string();
    std::string text;
    try {
      text = read_whole(path);
    } catch (const std::exception& e) {
      throw std::runtime_error(not_merged + ": " + e.what());
    }
    const size_t i = static_cast<size_t>(r);
    const comm::RankClock c = i < clocks.size() ? clocks[i] : comm::RankClock{};
    timelines.push_back({std::move(text), c.offset_ms, c.error_ms});
  }
  std::string text;
  try {
    text = merge_rank_timelines(timelines);
  } catch (const std::exception& e) {
    throw std::runtime_error(not_merged + ": " + e.what());
  }
  if (auto error = write_text_file(merged, text + "\n")) throw std::runtime_error("--dump: " + *error);
  const std::string index = (std::filesystem::path(dir) / "index.html").string();
  if (auto error = write_text_file(index, world_index_html(script, size))) throw std::runtime_error("--dump: " + *error);
}

}  // namespace tessera::jit
