// K3 tuning on the GPU: a region whose shapes have settled is lowered with
// its dims as constants in a few variants (the tile of elements per program
// and its layout, as on the CPU: kernel_tuner.h; and the threads per block),
// each is compiled, loaded and timed with CUDA events on the device, and the
// fastest is kept. The choice is a note in the persistent kernel cache,
// keyed by the region, its symbols' values and the architecture, so a later
// run with these shapes compiles only the chosen variant, without timing.
//
// The timing is the caller's (a function of the variant), so that the
// choice and its persistence are tested without a GPU. The JIT's call sites
// (gpu_kernel_device.h) build the variants in the background and time them
// on the first call of their shapes once all are built, so they use the
// notes directly: kept_gpu_variant, then keep_gpu_variant.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/kernel/kernel_disk_cache.h"
#include "codegen/kernel/lower_region.h"
#include "vm/graph/region.h"

namespace tessera::device {

// The dims of a K3 kernel: a value for each symbol made constant, nullopt
// for one that stays a parameter (RegionLowering::symbol_values).
using DimSpec = std::vector<std::optional<int64_t>>;

struct GpuVariant {
  int64_t tile = 1024;  // RegionLowering::tile
  int threads = 256;    // per block (CudaTarget::threads)
  bool flat = false;    // RegionLowering::flat
  bool operator==(const GpuVariant&) const = default;
  std::string str() const;  // "tile=2048 threads=256 flat=0"
  static std::optional<GpuVariant> parse(const std::string& s);
  // The lowering options of a K3 kernel of this variant for these dims.
  kir::RegionLowering lowering(const DimSpec& spec) const;
};

// The variants tried: tiles of 256 to 4096 elements in blocks of 128 or 256
// threads (no more threads than elements), rows or flat for outputs of rank
// 2 or more; row kernels (lower_region.h) have one layout and tile.
std::vector<GpuVariant> gpu_variants(const Region& r, const DimSpec& spec);

// The choice kept for (region, dims, architecture) in `cache`, if any (a
// damaged note is none).
std::optional<GpuVariant> kept_gpu_variant(const Region& r, const DimSpec& spec, const std::string& arch,
                                           const kir::KernelDiskCache& cache);
void keep_gpu_variant(const Region& r, const DimSpec& spec, const std::string& arch, const kir::KernelDiskCache& cache,
                      const GpuVariant& v);

struct GpuTuneOutcome {
  GpuVariant best;
  std::vector<std::pair<GpuVariant, double>> timings_ms;  // empty: the choice came from the cache
  std::vector<std::pair<GpuVariant, std::string>> refused;  // variants that could not be built, and why
};

// Times each variant with `time_ms` (which builds and runs it; an exception
// means the variant cannot be built: it is skipped) and keeps the fastest
// in `cache` (kind "gpu-tune"). Throws std::runtime_error when no variant
// can be built.
GpuTuneOutcome tune_gpu_region(const Region& r, const DimSpec& spec, const std::string& arch,
                               const kir::KernelDiskCache& cache,
                               const std::function<double(const GpuVariant&)>& time_ms);

}  // namespace tessera::device
