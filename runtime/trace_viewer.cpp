#include "runtime/trace_viewer.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/kernel/kernel_events.h"
#include "runtime/gpu_profile_json.h"
#include "runtime/kernel_call_tally.h"
#include "tracer/trace_ir.h"
#include "vm/core/text_file.h"

namespace tessera {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The note a kernel file of the dump opens with (the region's text, as `//`
// lines: runtime/kernels/cpu_target.cpp), which names its region.
std::string leading_note(const std::string& text) {
  std::string note;
  size_t pos = 0;
  while (pos < text.size() && text.compare(pos, 3, "// ") == 0) {
    const size_t nl = text.find('\n', pos);
    note += text.substr(pos + 3, (nl == std::string::npos ? text.size() : nl) - pos - 3) + "\n";
    pos = nl == std::string::npos ? text.size() : nl + 1;
  }
  return note;
}

// The line of an event's `at` ("FILE:LINE"), or null.
json line_of_at(const json& e) {
  if (!e.contains("at") || !e["at"].is_string()) return nullptr;
  const std::string at = e["at"].get<std::string>();
  const size_t colon = at.rfind(':');
  if (colon == std::string::npos) return nullptr;
  try {
    return std::stoi(at.substr(colon + 1));
  } catch (const std::exception&) {
    return nullptr;
  }
}

// The dump's events.jsonl (flushed line by line: complete when the page is
// written), one JSON object per event; lines that are not one are skipped.
std::vector<json> read_run_events(const fs::path& events) {
  std::vector<json> out;
  std::istringstream in(read_text(events));
  for (std::string l; std::getline(in, l);) {
    json e = json::parse(l, nullptr, false);
    if (!e.is_discarded() && e.is_object() && e.contains("event")) out.push_back(std::move(e));
  }
  return out;
}

std::string event_text(const json& e, const char* k) {
  return e.contains(k) && e[k].is_string() ? e[k].get<std::string>() : "";
}

// Per kernel, the tiers it was compiled as and where ("K2 on the cpu").
std::map<std::string, std::set<std::string>> kernel_tiers(const std::vector<json>& events) {
  std::map<std::string, std::set<std::string>> out;
  for (const json& e : events)
    if (event_text(e, "event") == "kernel.compiled")
      out[event_text(e, "kernel")].insert(event_text(e, "tier") + " on the " + event_text(e, "device"));
  return out;
}

// What went wrong in the run, as -jv and tlparse list it first: aborted
// recordings with their reasons, blacklisted loops and functions, dropped
// and invalidated traces, kernels refused. Alike ones (kind, line, reason,
// detail) are counted once. `kernel_line`: the line of the first trace that
// calls each kernel.
json run_failures(const std::vector<json>& events, const std::map<std::string, int>& kernel_line,
                  const std::map<uint32_t, int>& trace_line) {
  std::vector<json> out;
  std::map<std::string, size_t> seen;
  auto add = [&](const std::string& kind, json line, const std::string& reason, const std::string& detail) {
    const std::string key = kind + "\n" + line.dump() + "\n" + reason + "\n" + detail;
    if (auto it = seen.find(key); it != seen.end()) {
      out[it->second]["count"] = out[it->second]["count"].get<int64_t>() + 1;
      return;
    }
    seen[key] = out.size();
    out.push_back({{"kind", kind}, {"line", std::move(line)}, {"reason", reason}, {"detail", detail}, {"count", 1}});
  };
  const auto text = event_text;
  for (const json& e : events) {
    const std::string ev = text(e, "event");
    if (ev == "trace.abort") {
      add("aborted", line_of_at(e), text(e, "reason"), text(e, "detail"));
    } else if (ev == "blacklist") {
      add("blacklisted", line_of_at(e), text(e, "kind"), "no longer recorded, until its cool-down ends");
    } else if (ev == "trace.dropped") {
      json line = nullptr;
      if (e.contains("trace") && e["trace"].is_number_unsigned())
        if (auto it = trace_line.find(e["trace"].get<uint32_t>()); it != trace_line.end()) line = it->second;
      add("dropped", line, text(e, "reason"), "trace " + (e.contains("trace") ? e["trace"].dump() : "?") + ": " + text(e, "detail"));
    } else if (ev == "trace.invalidated") {
      add("invalidated", nullptr, "a global the traces assumed constant was stored",
          "global #" + (e.contains("global") ? e["global"].dump() : "?") + ": " +
              (e.contains("traces") ? e["traces"].dump() : "?") + " traces");
    } else if (ev == "kernel.refused") {
      const std::string k = text(e, "kernel");
      auto it = kernel_line.find(k);
      add("kernel refused", it == kernel_line.end() ? json(nullptr) : json(it->second), text(e, "reason"),
          "kernel " + k + " on the " + text(e, "device") + (text(e, "device") == "cpu" ? ": runs the interpreter's kernels" : ": runs on the CPU"));
    }
  }
  return json(out);
}

const char* kind_name(jit::Trace::Kind k) {
  return k == jit::Trace::Kind::Loop ? "loop" : k == jit::Trace::Kind::Function ? "function" : "side";
}

}  // namespace

std::string trace_viewer_html(const HotspotObserver& rt, const std::string& script_path, double wall_seconds,
                              const std::string& dump_dir) {
  json d;
  d["script"] = script_path;
  d["script_name"] = fs::path(script_path).filename().string();
  json source = json::array();
  {
    std::istringstream in(read_text(script_path));
    for (std::string line; std::getline(in, line);) source.push_back(line);
  }
  d["source"] = source;
  std::ostringstream stats;
  rt.print_stats(stats, wall_seconds);
  d["stats"] = stats.str();

  // Per line: heat (times its loop got hot, entries of traces starting there), traces, exits.
  std::map<int, json> lines;
  auto line = [&](int n) -> json& {
    json& l = lines[n];
    if (l.is_null()) l = {{"heat", 0}, {"ms", 0.0}, {"traces", json::array()}, {"exits", json::array()}};
    return l;
  };
  for (const HotspotObserver::HotLoop& l : rt.hot_loops()) line(l.line)["heat"] = line(l.line)["heat"].get<uint64_t>() + l.times;
  for (const HotspotObserver::HotFunction& f : rt.hot_functions())
    line(f.line)["heat"] = line(f.line)["heat"].get<uint64_t>() + f.times;

  json traces = json::array(), blacklisted = json::array();
  std::map<std::string, json> kernels;  // by region_report_id
  std::map<std::string, std::string> kernel_region;
  std::map<std::string, int> kernel_line;  // of the first trace that calls it
  std::map<uint32_t, int> trace_line;
  if (const jit::TraceJit* tj = rt.tracing()) {
    const std::map<uint32_t, double> trace_ms = tj->telemetry().trace_cpu_ms();
    for (const auto& tp : tj->traces()) {
      const jit::Trace& t = *tp;
      json j;
      j["id"] = t.id;
      j["kind"] = kind_name(t.kind);
      j["line"] = t.line;
      j["function"] = t.function;
      j["tier"] = t.tier;
      j["dead"] = t.dead || !t.tier;
      j["entries"] = t.entries;
      const auto ms = trace_ms.find(t.id);
      j["ms"] = ms == trace_ms.end() ? 0.0 : ms->second;  // sampled CPU time in its code
      j["returns"] = t.returns_taken;
      j["ir_size"] = t.ir.size();
      j["recorded_size"] = t.recorded_size;
      j["parent"] = t.is_side ? json(t.parent) : json(nullptr);
      j["parent_exit"] = t.is_side ? json(t.parent_snap) : json(nullptr);
      j["link"] = t.link == static_cast<int32_t>(t.id) ? std::string("its own start")
                  : t.link >= 0                        ? "trace " + std::to_string(t.link)
                  : t.kind == jit::Trace::Kind::Loop   ? std::string("loops")
                  : t.kind == jit::Trace::Kind::Function ? std::string("returns")
                                                         : std::string("the interpreter");
      json passes = json::array();
      for (const auto& [name, ir] : t.pass_ir) passes.push_back({{"name", name}, {"ir", ir}});
      j["passes"] = passes;
      j["compiled_ir"] = t.compiled_ir;  // printed while the module lived (trace.h)
      json provenance = json::array();
      for (const jit::IrProvenance& p : t.provenance)
        provenance.push_back(p.line ? json{{"line", p.line}, {"pc", p.pc}, {"function", p.function}, {"bytecode", p.bytecode}}
                                    : json(nullptr));
      j["provenance"] = provenance;
      json snap_names = json::array();
      for (const auto& names : t.snapshot_names) {
        json o = json::object();
        for (const auto& [slot, name] : names) o[std::to_string(slot)] = name;
        snap_names.push_back(std::move(o));
      }
      j["snapshot_names"] = snap_names;
      j["t1_asm"] = t.code_text[0];
      j["t2_llvm"] = t.code_text[1];
      j["t2_asm"] = t.code_disassembly;
      json exits = json::array();
      for (size_t s = 0; s < t.exits.size(); ++s) {
        const jit::Trace* attached = jit::side_trace_at(tj->traces(), t.id, s);
        const json side = attached ? json(attached->id) : json(nullptr);
        if (!t.exits[s] && !attached) continue;
        const int at = t.exit_line(s);
        exits.push_back({{"exit", s}, {"line", at}, {"taken", t.exits[s]}, {"side", side}});
        if (t.exits[s]) line(at)["exits"].push_back({{"trace", t.id}, {"exit", s}, {"taken", t.exits[s]}});
      }
      j["exits"] = exits;
      std::set<std::string> called;
      for (const jit::CallTarget& c : t.ir.calls()) {
        const Region* region = c.kernel_region();
        if (!region) continue;
        const std::string id = kir::region_report_id(*region);
        called.insert(id);
        json& k = kernels[id];
        if (k.is_null()) {
          k = {{"id", id}, {"ops", kir::region_ops_text(*region)}, {"region", region->str()}, {"traces", json::array()},
               {"files", json::array()}};
          kernel_region[id] = region->str();
        }
        k["traces"].push_back(t.id);
        kernel_line.emplace(id, t.line);
      }
      j["kernels"] = json(called);
      trace_line[t.id] = t.line;
      json& l = line(t.line);
      l["traces"].push_back(t.id);
      l["heat"] = l["heat"].get<uint64_t>() + t.entries;
      l["ms"] = l["ms"].get<double>() + j["ms"].get<double>();
      traces.push_back(std::move(j));
    }
    for (const jit::BlacklistedRoot& b : tj->blacklisted()) blacklisted.push_back({{"kind", b.kind}, {"line", b.line}});
  }
  // The kernels' generated code: the dump's kernel-*.kir files whose note is
  // the region, and the files of the same name beside them.
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dump_dir, ec)) {
    const fs::path p = entry.path();
    if (p.extension() != ".kir" || p.filename().string().rfind("kernel-", 0) != 0) continue;
    const std::string note = leading_note(read_text(p));
    for (const auto& [id, region] : kernel_region) {
      if (note != region) continue;
      for (const char* ext : {".kir", ".ll", ".cu", ".ptx"}) {
        fs::path f = p;
        f.replace_extension(ext);
        if (fs::exists(f))
          kernels[id]["files"].push_back({{"ext", std::string(ext + 1)}, {"name", f.filename().string()}, {"text", read_text(f)}});
      }
    }
  }
  // Each kernel's calls, time and rates (the tally --metrics reports), and
  // its time on the line of the trace that calls it.
  if (const jit::KernelCallTally* tally = rt.kernel_tally()) {
    for (const auto& [name, kt] : tally->kernels()) {
      // The span's name: "kernel k1a2b3c4d5e6 (mul add tanh)".
      if (name.rfind("kernel ", 0) != 0) continue;
      const std::string id = name.substr(7, name.find(' ', 7) - 7);
      auto it = kernels.find(id);
      if (it == kernels.end()) continue;
      json& k = it->second;
      k["calls"] = kt.calls;
      k["ms"] = kt.ms;
      k["device"] = kt.device;
      k["gb_per_s"] = kt.ms > 0 ? static_cast<double>(kt.bytes) / kt.ms / 1e6 : 0.0;
      k["gflop_per_s"] = kt.ms > 0 && kt.flops ? json(static_cast<double>(kt.flops) / kt.ms / 1e6) : json(nullptr);
      if (auto l = kernel_line.find(id); l != kernel_line.end()) {
        json& at = line(l->second);
        at["ms"] = at["ms"].get<double>() + kt.ms;
      }
    }
  }
  // The interpreter's samples by line (interpreter_samples.h).
  if (const jit::TraceJit* tj = rt.tracing()) {
    const double per_sample = tj->telemetry().ms_per_sample();
    for (const auto& [n, samples] : rt.interpreter_line_samples()) {
      json& at = line(n);
      at["interp_ms"] = per_sample * static_cast<double>(samples);
      at["ms"] = at["ms"].get<double>() + per_sample * static_cast<double>(samples);
    }
  }
  json kernel_list = json::array();
  for (auto& [id, k] : kernels) kernel_list.push_back(std::move(k));
  json line_map = json::object();
  for (auto& [n, l] : lines) line_map[std::to_string(n)] = std::move(l);
  d["lines"] = line_map;
  d["traces"] = traces;
  d["kernels"] = kernel_list;
  d["blacklisted"] = blacklisted;
  const std::vector<json> events = read_run_events(fs::path(dump_dir) / "events.jsonl");
  d["failures"] = run_failures(events, kernel_line, trace_line);
  const std::map<std::string, std::set<std::string>> tiers = kernel_tiers(events);
  for (json& k : d["kernels"]) {
    auto it = tiers.find(k["id"].get<std::string>());
    k["tiers"] = it == tiers.end() ? json::array() : json(it->second);
  }
  const fs::path svg = fs::path(dump_dir) / "traces.svg", dot = fs::path(dump_dir) / "traces.dot";
  d["tree_svg"] = fs::exists(svg) ? json(read_text(svg)) : json(nullptr);
  d["tree_dot"] = fs::exists(dot) ? read_text(dot) : std::string();
  // The GPU's kernels as CUPTI recorded them, each drawn against the
  // device's roofline by the page (finish_device took the last records).
  const std::shared_ptr<const kernels::GpuTarget> gpu = rt.gpu_target();
  d["gpu"] = {{"profile", gpu_profile_json(gpu.get())},
              {"kernels", gpu ? gpu_kernels_json(gpu->profile()) : json::array()}};

  // Inside <script>, "</" would end it: JSON allows "<\/" for the same text.
  std::string text = d.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  for (size_t pos = 0; (pos = text.find("</", pos)) != std::string::npos; pos += 3) text.replace(pos, 2, "<\\/");
  std::string page = trace_viewer_page();
  const std::string mark = "/*TESSERA_DATA*/";
  const size_t at = page.find(mark);
  if (at == std::string::npos) throw std::logic_error("the trace viewer's template has no /*TESSERA_DATA*/");
  page.replace(at, mark.size(), text);
  return page;
}

void write_trace_viewer(const HotspotObserver& rt, const std::string& script_path, double wall_seconds,
                        const std::string& dump_dir) {
  const std::string path = (fs::path(dump_dir) / "index.html").string();
  if (auto error = write_text_file(path, trace_viewer_html(rt, script_path, wall_seconds, dump_dir)))
    throw std::runtime_error("--dump: " + *error);
}

}  // namespace tessera
