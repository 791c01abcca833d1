// KernelVariant: one way of lowering a region to a kernel, what K3 tuning
// chooses among on every target (kernel_tuner.h): the tile of elements per
// program, whether outputs of rank 2 or more are tiled row by row or flat,
// and the threads (the CPU's: launch()'s split, cpu_launch.h; a GPU's: per
// block). Its text form is what the kernel cache keeps of a choice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel/lower_region.h"

namespace tessera::kernels {

// The dims of a K3 kernel: a value for each symbol made constant, nullopt
// for one that stays a parameter; empty for K2 (every dim a parameter).
using DimSpec = std::vector<std::optional<int64_t>>;

// "4,?,8": the dims of a DimSpec as events and notes write them.
std::string dims_text(const DimSpec& spec);

struct KernelVariant {
  int64_t tile = 1024;  // RegionLowering::tile
  // The CPU: launch()'s threads (0: by the grid, kEveryCore: every core);
  // a GPU: threads per block (0: from the kernel's tile).
  int threads = 0;
  bool flat = false;  // RegionLowering::flat
  // A leading attention's query rows per program (AttentionTiles::rows; 0:
  // the lowering's default). The text form names it only when set, so the
  // kernel cache's older notes still read.
  int64_t rows = 0;
  // A GPU's products of half tiles on Hopper's wgmma (kir::CudaTarget::
  // wgmma); the text form names it only when set.
  bool wgmma = false;
  bool operator==(const KernelVariant&) const = default;
  std::string str() const;  // "tile=4096 threads=1 flat=0" [" rows=128"] [" wgmma"]
  // nullopt for a text that is not one (a damaged note in the cache).
  static std::optional<KernelVariant> parse(const std::string& s);
  // The lowering of this variant with the constant dims `spec`.
  kir::RegionLowering lowering(const DimSpec& spec) const;
};

}  // namespace tessera::kernels
