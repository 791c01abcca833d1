// What a launcher needs to run a CUDA kernel lowered from a region
// (lower_region.h): which params are passed by value (the region's script
// scalars), and the kernel's argument list as the addresses cuLaunchKernel
// (and the host emulation's entry) take.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/kernel/cuda/cuda_emitter.h"
#include "vm/graph/region.h"

namespace tessera::kir {

// The target for kernels lowered from r: its scalar inputs by value.
CudaTarget cuda_target_for(const Region& r, int threads = 0);

// The address of each kernel argument in the source's order. params[i] is
// the address of param i's value: of a variable holding the device pointer
// for a Pointer param, of the scalar for a Value param; dims and grid (three
// extents) are read in place. The vectors must outlive the launch.
std::vector<void*> cuda_kernel_args(const CudaKernelSource& s, const std::vector<void*>& params,
                                    const std::vector<int64_t>& dims, const std::vector<int64_t>& grid);

}  // namespace tessera::kir
