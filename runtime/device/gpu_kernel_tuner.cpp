#include "runtime/device/gpu_kernel_tuner.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace tessera::device {

namespace {

constexpr const char* kKind = "gpu-tune";

std::string identity(const Region& r, const DimSpec& spec, const std::string& arch) {
  std::string id = "arch " + arch + "\nsymbols";
  for (const std::optional<int64_t>& s : spec) id += " " + (s ? std::to_string(*s) : std::string("?"));
  return id + "\n" + r.str();
}

}  // namespace

std::string GpuVariant::str() const {
  return "tile=" + std::to_string(tile) + " threads=" + std::to_string(threads) + " flat=" + (flat ? "1" : "0");
}

std::optional<GpuVariant> GpuVariant::parse(const std::string& s) {
  long long tile = 0;
  int threads = 0, flat = 0;
  char tail = 0;
  if (std::sscanf(s.c_str(), "tile=%lld threads=%d flat=%d%c", &tile, &threads, &flat, &tail) != 3) return std::nullopt;
  if (tile < 1 || threads < 32 || threads % 32 != 0 || threads > 1024 || (flat != 0 && flat != 1)) return std::nullopt;
  return GpuVariant{tile, threads, flat == 1};
}

kir::RegionLowering GpuVariant::lowering(const DimSpec& spec) const {
  kir::RegionLowering opt;
  opt.tile = tile;
  opt.flat = flat;
  opt.symbol_values = spec;
  return opt;
}

std::vector<GpuVariant> gpu_variants(const Region& r, const DimSpec& spec) {
  std::vector<GpuVariant> v;
  const bool rows = !r.row_dims().empty();
  size_t rank = 0;
  for (int o : r.outputs) rank = std::max(rank, r.type(o).dims.size());
  (void)spec;
  for (int64_t tile : {256, 512, 1024, 2048, 4096}) {
    if (rows && tile != 1024) continue;
    for (int threads : {128, 256}) {
      if (threads > tile) continue;
      v.push_back({tile, threads, false});
      if (!rows && rank > 1) v.push_back({tile, threads, true});
    }
  }
  return v;
}

std::optional<GpuVariant> kept_gpu_variant(const Region& r, const DimSpec& spec, const std::string& arch,
                                           const kir::KernelDiskCache& cache) {
  if (std::optional<std::string> kept = cache.load(kKind, identity(r, spec, arch))) return GpuVariant::parse(*kept);
  return std::nullopt;
}

void keep_gpu_variant(const Region& r, const DimSpec& spec, const std::string& arch, const kir::KernelDiskCache& cache,
                      const GpuVariant& v) {
  cache.store(kKind, identity(r, spec, arch), v.str());
}

GpuTuneOutcome tune_gpu_region(const Region& r, const DimSpec& spec, const std::string& arch,
                               const kir::KernelDiskCache& cache,
                               const std::function<double(const GpuVariant&)>& time_ms) {
  GpuTuneOutcome out;
  if (std::optional<GpuVariant> v = kept_gpu_variant(r, spec, arch, cache)) {
    out.best = *v;
    return out;
  }
  double best = std::numeric_limits<double>::infinity();
  for (const GpuVariant& v : gpu_variants(r, spec)) {
    try {
      const double ms = time_ms(v);
      out.timings_ms.emplace_back(v, ms);
      if (ms < best) best = ms, out.best = v;
    } catch (const std::exception& e) {
      out.refused.emplace_back(v, e.what());
    }
  }
  if (out.timings_ms.empty())
    throw std::runtime_error("GPU tuning: no variant of the region could be built" +
                             (out.refused.empty() ? std::string() : ": " + out.refused.front().second));
  keep_gpu_variant(r, spec, arch, cache, out.best);
  return out;
}

}  // namespace tessera::device
