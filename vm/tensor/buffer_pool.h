// The storage of tensors: 64-byte aligned buffers, with large ones kept for
// reuse after their tensor dies. A loop that makes a fresh tensor of the same
// size every iteration then reuses one mapped, already-faulted buffer instead
// of having the allocator return it to the OS and fault its pages in again
// (measured: a million-element elementwise chain spent a third of its time in
// page faults). Buffers of kPooledMinBytes or more are rounded up to size
// classes (eight per power of two, at most 12.5% slack) and at most
// kPoolMaxBytes of them are kept; the rest go back to the allocator.
// Thread-safe: a tensor may die on another thread than the one that made it.
#pragma once

#include <cstddef>

namespace tessera {

constexpr size_t kPooledMinBytes = size_t{64} << 10;
constexpr size_t kPoolMaxBytes = size_t{256} << 20;

// A buffer of at least `bytes` bytes (> 0), 64-byte aligned; throws
// std::bad_alloc as operator new does.
void* tensor_buffer_alloc(size_t bytes);
// Gives back a buffer from tensor_buffer_alloc(bytes), with the same `bytes`.
void tensor_buffer_free(void* p, size_t bytes) noexcept;

struct TensorBufferPoolStats {
  size_t cached_bytes = 0;  // held for reuse now
  size_t reuses = 0;        // allocations served from the pool
};
TensorBufferPoolStats tensor_buffer_pool_stats();

}  // namespace tessera
