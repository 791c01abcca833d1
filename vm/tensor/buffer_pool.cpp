#include "vm/tensor/buffer_pool.h"

#include <bit>
#include <cstdint>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace tessera {

namespace {

constexpr std::align_val_t kAlign{64};

// The size class of a pooled request: the smallest m * 2^k >= bytes with m in 8..15.
size_t size_class(size_t bytes) {
  const int top = std::bit_width(bytes) - 1;  // 2^top <= bytes < 2^(top+1)
  const size_t step = size_t{1} << (top - 3);
  return (bytes + step - 1) / step * step;
}

struct Pool {
  std::mutex mu;
  std::unordered_map<size_t, std::vector<void*>> free;  // by size class
  size_t cached = 0;
  size_t reuses = 0;
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: tensors may die during static destruction
  return *p;
}

}  // namespace

void* tensor_buffer_alloc(size_t bytes) {
  if (bytes < kPooledMinBytes) return ::operator new(bytes, kAlign);
  const size_t cls = size_class(bytes);
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mu);
    auto it = p.free.find(cls);
    if (it != p.free.end() && !it->second.empty()) {
      void* b = it->second.back();
      it->second.pop_back();
      p.cached -= cls;
      ++p.reuses;
      return b;
    }
  }
  return ::operator new(cls, kAlign);
}

void tensor_buffer_free(void* b, size_t bytes) noexcept {
  if (b == nullptr) return;
  if (bytes < kPooledMinBytes) return ::operator delete(b, kAlign);
  const size_t cls = size_class(bytes);
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mu);
    if (p.cached + cls <= kPoolMaxBytes) {
      try {
        p.free[cls].push_back(b);
        p.cached += cls;
        return;
      } catch (...) {
        // No room to remember it: give it back below.
      }
    }
  }
  ::operator delete(b, kAlign);
}

TensorBufferPoolStats tensor_buffer_pool_stats() {
  Pool& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  return TensorBufferPoolStats{p.cached, p.reuses};
}

}  // namespace tessera
