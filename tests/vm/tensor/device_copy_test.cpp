// Residency on the host side (vm/tensor/device_copy.h): a tensor whose
// elements a device holds brings them back on its first host access, then
// drops the device's copy; reading the buffer as it is does not; the copy is
// destroyed with the tensor; kernels that read a tensor see the device's
// elements.
#include <gtest/gtest.h>

#include "vm/graph/op_table.h"
#include "vm/tensor/tensor.h"

namespace tessera {
namespace {

struct Counts {
  int fetched = 0, destroyed = 0;
};

class FakeCopy : public DeviceCopy {
 public:
  FakeCopy(Counts& c, float base) : c_(c), base_(base) {}
  ~FakeCopy() override { ++c_.destroyed; }
  void to_host(void* host, size_t bytes) override {
    ++c_.fetched;
    auto* f = static_cast<float*>(host);
    for (size_t i = 0; i < bytes / sizeof(float); ++i) f[i] = base_ + static_cast<float>(i);
  }

 private:
  Counts& c_;
  float base_;
};

TEST(DeviceCopy, TheFirstHostAccessFetchesOnceAndDropsTheCopy) {
  Counts c;
  Value v = make_tensor(DType::F32, {4});
  TensorObj& t = *v.as_tensor();
  t.attach_device_copy(std::make_unique<FakeCopy>(c, 10.0f));
  EXPECT_EQ(static_cast<const float*>(t.host_buffer())[1], 0.0f);  // stale, and not fetched
  EXPECT_EQ(c.fetched, 0);
  EXPECT_EQ(t.get_f(1), 11.0);
  EXPECT_EQ(c.fetched, 1);
  EXPECT_EQ(c.destroyed, 1);
  EXPECT_EQ(t.device_copy, nullptr);
  t.set_f(2, 5.0);
  EXPECT_EQ(t.ptr<float>()[2], 5.0f);
  EXPECT_EQ(c.fetched, 1);
}

TEST(DeviceCopy, KernelsReadTheDevicesElementsAndTheCopyDiesWithTheTensor) {
  Counts c;
  {
    Value v = make_tensor(DType::F32, {3});
    v.as_tensor()->attach_device_copy(std::make_unique<FakeCopy>(c, 1.0f));
    const Value s = call_op(OpId::Sum, std::vector<Value>{v});
    EXPECT_EQ(s.as_tensor()->get_f(0), 1.0 + 2.0 + 3.0);
    EXPECT_EQ(c.fetched, 1);
    Value w = make_tensor(DType::F32, {3});
    w.as_tensor()->attach_device_copy(std::make_unique<FakeCopy>(c, 0.0f));
    // Replacing a copy destroys the one it replaces.
    w.as_tensor()->attach_device_copy(std::make_unique<FakeCopy>(c, 0.0f));
    EXPECT_EQ(c.destroyed, 2);
  }
  EXPECT_EQ(c.destroyed, 3);  // w's, never fetched, went with w
  EXPECT_EQ(c.fetched, 1);
}

}  // namespace
}  // namespace tessera
