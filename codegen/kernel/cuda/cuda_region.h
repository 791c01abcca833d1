// What a launcher needs to run a CUDA kernel lowered from a region
// (lower_region.h): which params are passed by value (the region's script
// scalars), and the kernel's argument list as the addresses cuLaunchKernel
// (and the host emulation's entry) take.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "codegen/kernel/cuda/cuda_emitter.h"
#include "vm/graph/region.h"

namespace tessera::kir {

// The target for kernels lowered from r: its scalar inputs by value.
CudaTarget cuda_target_for(const Region& r, int threads = 0);

// A TensorMap argument's map, as cuTensorMapEncodeTiled takes it: a 2-D
// matrix of `elem` at device address `base`, `cols` contiguous elements by
// `rows` rows `row_bytes` apart, read in boxes of box_cols x box_rows.
struct TensorMapRequest {
  uint64_t base = 0;
  Elem elem = Elem::F16;
  uint64_t cols = 0, rows = 0, row_bytes = 0;
  unsigned box_cols = 0, box_rows = 0;
};
// A tensor map's bytes (CUtensorMap: 128, 64-aligned).
struct alignas(64) TensorMapBytes {
  unsigned char bytes[128];
};
// Encodes a map (the launchable kernel's device: LaunchableKernel::encode_tensor_map); false
// where the device refuses its arguments (a base not 16-byte aligned, a row of a size not a
// multiple of 16 bytes): the map is left zeros, and the kernel, which checks the same of its
// blocks before it issues a box, copies them without TMA.
using TensorMapEncoder = std::function<bool(const TensorMapRequest&, TensorMapBytes&)>;

// The address of each kernel argument in the source's order. params[i] is
// the address of param i's value: of a variable holding the device pointer
// for a Pointer param, of the scalar for a Value param; dims and grid (three
// extents) are read in place. A kernel with TensorMap arguments needs
// `maps` (their bytes, encoded by `encode`); the vectors must outlive the launch.
std::vector<void*> cuda_kernel_args(const CudaKernelSource& s, const std::vector<void*>& params,
                                    const std::vector<int64_t>& dims, const std::vector<int64_t>& grid,
                                    std::vector<TensorMapBytes>* maps = nullptr, const TensorMapEncoder& encode = {});

}  // namespace tessera::kir
