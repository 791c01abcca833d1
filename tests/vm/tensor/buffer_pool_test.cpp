// Tensor storage (vm/tensor/buffer_pool.h): large buffers are reused by the
// next tensor of their size class, small ones are not kept, and reuse
// never hands out a buffer that is still in use.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "vm/tensor/buffer_pool.h"
#include "vm/tensor/tensor.h"

namespace tessera {
namespace {

TEST(BufferPool, ALargeBufferIsReusedByTheNextTensorOfItsSize) {
  const size_t before = tensor_buffer_pool_stats().reuses;
  void* first = nullptr;
  {
    Value t = make_tensor(DType::F32, {1024, 64});  // 256 KiB
    first = t.as_tensor()->data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  }
  Value u = make_tensor(DType::F32, {1024, 63});  // same size class (252 KiB)
  EXPECT_EQ(u.as_tensor()->data(), first);
  EXPECT_EQ(tensor_buffer_pool_stats().reuses, before + 1);
  // Zero-filled although the buffer held another tensor's elements.
  const float* p = u.as_tensor()->ptr<float>();
  for (int64_t i = 0; i < u.as_tensor()->numel; ++i) ASSERT_EQ(p[i], 0.0f);
  // While u lives, the next tensor of that size gets another buffer.
  Value w = make_tensor(DType::F32, {1024, 64});
  EXPECT_NE(w.as_tensor()->data(), first);
}

TEST(BufferPool, SmallBuffersAreNotKept) {
  const TensorBufferPoolStats before = tensor_buffer_pool_stats();
  { Value t = make_tensor(DType::F32, {16}); }
  Value u = make_tensor(DType::F32, {16});
  EXPECT_EQ(tensor_buffer_pool_stats().reuses, before.reuses);
  EXPECT_EQ(tensor_buffer_pool_stats().cached_bytes, before.cached_bytes);
}

TEST(BufferPool, TheCacheIsBounded) {
  {
    std::vector<Value> many;
    for (int i = 0; i < 6; ++i) many.push_back(make_tensor(DType::F32, {16 << 20}, false));  // 64 MiB each
  }
  EXPECT_LE(tensor_buffer_pool_stats().cached_bytes, kPoolMaxBytes);
}

}  // namespace
}  // namespace tessera
