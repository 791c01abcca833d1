// EmulatedKernelHook: what the host emulation tells a profiler of each
// kernel it ran, standing in for the driver instrumentation CUPTI does on a
// GPU: its entry, grid and block, shared memory, and when it ran (ns of the
// steady clock, which a CUPTI double's cuptiGetTimestamp also reads).
#pragma once

#include <cstdint>

namespace tessera::device {

using EmulatedKernelHook = void (*)(const char* name, const int32_t grid[3], const int32_t block[3], int32_t static_smem,
                                    int32_t dynamic_smem, uint64_t start_ns, uint64_t end_ns);

}  // namespace tessera::device
