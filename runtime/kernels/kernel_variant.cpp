#include "runtime/kernels/kernel_variant.h"

#include <cstdio>

#include "codegen/kernel/cpu/cpu_launch.h"

namespace tessera::kernels {

std::string dims_text(const DimSpec& spec) {
  std::string dims;
  for (const auto& d : spec) dims += (dims.empty() ? "" : ",") + (d ? std::to_string(*d) : std::string("?"));
  return dims;
}

std::string KernelVariant::str() const {
  return "tile=" + std::to_string(tile) + " threads=" + std::to_string(threads) + " flat=" + (flat ? "1" : "0") +
         (rows ? " rows=" + std::to_string(rows) : "") + (wgmma ? " wgmma" : "");
}

std::optional<KernelVariant> KernelVariant::parse(const std::string& s) {
  long long tile = 0, rows = 0;
  int threads = 0, flat = 0, used = 0, more = 0;
  if (std::sscanf(s.c_str(), "tile=%lld threads=%d flat=%d%n", &tile, &threads, &flat, &used) != 3) return std::nullopt;
  std::string rest = s.substr(static_cast<size_t>(used));
  const std::string kWgmma = " wgmma";
  const bool wgmma = rest.size() >= kWgmma.size() && rest.compare(rest.size() - kWgmma.size(), kWgmma.size(), kWgmma) == 0;
  if (wgmma) rest.resize(rest.size() - kWgmma.size());
  if (!rest.empty() && (std::sscanf(rest.c_str(), " rows=%lld%n", &rows, &more) != 1 ||
                        static_cast<size_t>(more) != rest.size() || rows == 0))
    return std::nullopt;
  if (tile < 1 || tile > (1 << 20) || threads < kir::kEveryCore || threads > 1024 || (flat != 0 && flat != 1) ||
      rows < 0 || rows > 1024 || rows % 16 != 0)
    return std::nullopt;
  return KernelVariant{tile, threads, flat == 1, rows, wgmma};
}

kir::RegionLowering KernelVariant::lowering(const DimSpec& spec) const {
  kir::RegionLowering opt;
  opt.tile = tile;
  opt.flat = flat;
  if (!spec.empty()) opt.symbol_values = spec;
  return opt;
}

}  // namespace tessera::kernels
