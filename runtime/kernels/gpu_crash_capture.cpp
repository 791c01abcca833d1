#include "runtime/kernels/gpu_crash_capture.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "codegen/kernel/kernel_text.h"

namespace tessera::kernels {
namespace {

namespace fs = std::filesystem;

const char* arg_kind(kir::CudaArgKind k) {
  static constexpr const char* kNames[] = {"pointer", "value", "dim", "grid", "tensor_map"};
  return kNames[static_cast<size_t>(k)];
}

fs::path crash_root() {
  if (const char* d = std::getenv("TESSERA_CRASH_DIR"); d && *d) return d;
  std::error_code ec;
  fs::path t = fs::temp_directory_path(ec);
  return ec ? fs::path(".") : t;
}

// Throws std::runtime_error when the file cannot be written.
void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

}  // namespace

void RecentLaunches::add(std::string line) {
  if (lines_.size() == kKept) lines_.pop_front();
  lines_.push_back(std::move(line));
}

void RecentEvents::add(std::string line) {
  std::lock_guard<std::mutex> lock(mu_);
  ring_.add(std::move(line));
}

std::vector<std::string> RecentEvents::lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ring_.lines();
}

std::string write_gpu_crash(const GpuCrashReport& r, std::string& why) {
  static std::atomic<int> seq{0};
  const fs::path dir = crash_root() / ("tessera-crash-" + std::to_string(::getpid()) + "-" + std::to_string(seq++));
  try {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw std::runtime_error("cannot make " + dir.string() + ": " + ec.message());
    write_file(dir / "error.txt", r.error + "\n");
    if (r.region) write_file(dir / "region.txt", r.region->str() + "\n");
    nlohmann::ordered_json j;
    j["error"] = r.error;
    j["device"] = r.device;
    if (r.region) {
      j["variant"] = r.variant;
      j["tier"] = r.tier;
      j["dims"] = r.dims;
      j["inputs"] = r.inputs;
    }
    nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
    for (const GpuCrashReport::KernelRun& k : r.kernels) {
      if (k.kernel) write_file(dir / (k.name + ".kir"), kir::print(*k.kernel));
      nlohmann::ordered_json e;
      e["name"] = k.name;
      if (k.source) {
        write_file(dir / (k.name + ".cu"), k.source->source);
        e["entry"] = k.source->entry;
        e["threads"] = k.source->threads;
        e["shared_bytes"] = k.source->shared_bytes;
        nlohmann::ordered_json args = nlohmann::ordered_json::array();
        for (const kir::CudaArg& a : k.source->args) args.push_back({{"kind", arg_kind(a.kind)}, {"index", a.index}});
        e["args"] = std::move(args);
      }
      e["grid"] = k.grid;
      kernels.push_back(std::move(e));
    }
    j["kernels"] = std::move(kernels);
    write_file(dir / "launch.json", j.dump(2) + "\n");
    std::string recent;
    for (const std::string& l : r.recent) recent += l + "\n";
    write_file(dir / "recent-launches.txt", recent);
    std::string events;
    for (const std::string& l : r.events) events += l + "\n";
    write_file(dir / "recent-events.txt", events);
  } catch (const std::exception& e) {
    why = e.what();
    return {};
  }
  return dir.string();
}

std::string gpu_crash_message(const std::string& what, const GpuCrashReport& r) {
  std::string why;
  const std::string dir = write_gpu_crash(r, why);
  return what + ": " + r.error +
         (dir.empty() ? " (no crash capture: " + why + ")"
                      : "; what the GPU ran is in " + dir + " (region, kernel IR and CUDA C++, launch.json)");
}

}  // namespace tessera::kernels
