// Kernel IR → CUDA C++ (for NVRTC, and for the host under the emulation
// prelude: tessera_cuda.h).
//
// Design: a program of the kernel IR is one CUDA block of `threads` threads.
// A tile of N elements is spread over the block: thread t holds elements
// t, t + threads, t + 2 threads, ... in a register array of
// ceil(N / threads) entries, so elementwise operations, loads and stores
// touch consecutive addresses with consecutive threads (coalesced), and
// every tile operation of the IR is a short unrolled loop per thread.
// Scalars are computed by every thread alike (uniform values). Operations
// that move elements between threads (reduce, broadcast, trans, dot) stage
// their operands in the block's dynamic shared memory between two
// __syncthreads; a reduction to a scalar folds contiguous chunks per
// thread, then the chunks' results in order, so extremes and argmax keep
// the interpreter's first-in-element-order rule and sums accumulate in
// double. A load from an output param (what this program stored earlier,
// possibly by another thread) is fenced by barriers. All control flow is
// uniform across the block (loop bounds are scalars), so the barriers are
// always reached by every thread.
//
// The kernel's arguments: each param (a pointer, or by value for a 0-d
// input the caller marks as a scalar), each dim's value (int64; a K3
// kernel's constant dims are folded into the code and their arguments
// ignored), and the grid's three extents (int64). The grid is launched as
// one axis of g0 * g1 * g2 blocks, split as the CPU's launcher splits it
// (kernel_abi.h: axis 0 fastest).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel/kernel_ir.h"

namespace tessera::kir {

struct CudaTarget {
  int threads = 0;  // threads per block; 0: from the kernel's largest tile (32 .. 256)
  // Hopper (sm_90a; the host emulation runs it too): products of half
  // tiles whose rows are a multiple of 64, in blocks of a multiple of 128
  // threads, run on warpgroup wgmma with both operands in shared memory
  // (cuda_emitter_wgmma.cpp) instead of mma.sync.
  bool wgmma = false;
  // With wgmma: where every pipelined block load of the kernel's one loop
  // is copied by TMA, one more warp (the producer, threads past `threads`)
  // runs that loop alone, copying each iteration's blocks, while the
  // block's `threads` consumers compute (producer/consumer warp
  // specialization, cuda_emitter_producer.cpp). The source's `threads` then
  // counts the producer warp too.
  bool producer_warp = true;
  // Params passed by value: 0-d inputs that hold a script scalar (lower_region's
  // f32 / i64 / i1 scalar inputs); other params are device pointers.
  std::vector<bool> by_value;
};

enum class CudaArgKind : uint8_t { Pointer, Value, Dim, Grid, TensorMap };

struct CudaArg {
  CudaArgKind kind = CudaArgKind::Pointer;
  int index = 0;          // param, dim or grid axis
  Elem elem = Elem::F32;  // Value: the scalar's element type (i1 passed as one byte); TensorMap: the param's
  // TensorMap (Hopper's TMA): a tsr_tensor_map (128 bytes, by value) of
  // param `index` seen as a 2-D matrix, its last dim's columns by the
  // product of its other dims' rows (`shape`: the param's dims), read in
  // boxes of 8 columns by `box_rows` rows; the launcher encodes it for the
  // call's pointer and dims (cuda_region.h).
  int64_t box_rows = 0;
  std::vector<DimRef> shape;
};

struct CudaKernelSource {
  std::string entry;         // the extern "C" kernel; `entry`_host under TSR_HOST_EMULATION
  std::string source;        // CUDA C++ that includes "tessera_cuda.h"
  int threads = 0;           // per block
  int64_t shared_bytes = 0;  // dynamic shared memory per block
  std::vector<CudaArg> args;
};

// Shared memory one block may use (an H100's opt-in maximum per block); a
// kernel that needs more is refused.
constexpr int64_t kCudaMaxSharedBytes = 227 * 1024;
// Tile elements one thread may hold (more would live in local memory).
constexpr int64_t kCudaMaxElemsPerThread = 64;

// Throws std::runtime_error ("cuda emitter: kernel @name: ...") for what the
// emitter does not do, std::invalid_argument for a kernel the verifier refuses.
CudaKernelSource emit_cuda_kernel(const Kernel& k, const std::string& entry, const CudaTarget& target = {});

// The texts of tessera_cuda.h and of the host emulation prelude
// tessera_cuda_host.h, as built into the binary (handed to NVRTC as
// in-memory headers; written beside a host compile of generated code).
const std::string& cuda_wrapper_header();
const std::string& cuda_host_prelude();

}  // namespace tessera::kir
