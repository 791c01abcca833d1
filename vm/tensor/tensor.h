// TensorObj: a refcounted n-d array with contiguous row-major storage.
//
// The buffer is 64-byte aligned (SIMD/BLAS friendly) and owned by the object;
// dropping the last Value frees it immediately (large buffers go to a pool
// for the next tensor of their size, buffer_pool.h), so loops that make a
// fresh tensor per iteration run in constant memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vm/core/value.h"
#include "vm/tensor/device_copy.h"
#include "vm/tensor/dtype.h"

namespace tessera {

using Shape = std::vector<int64_t>;

constexpr size_t kMaxRank = 8;
// Allocations beyond this are refused with "tensor too large" instead of
// letting the OS overcommit and kill the process later.
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 34;  // 16 GiB

// Who owns the elements of a tensor over memory the VM did not allocate (the
// embedding API's wrapped host buffers and DLPack imports): destroyed, it
// gives the memory back to its owner.
struct ExternalStorage {
  virtual ~ExternalStorage() = default;
};

struct TensorObj : Obj {
  DType dtype;
  Shape shape;
  int64_t numel = 0;

  TensorObj(DType dt, Shape s);  // allocates; throws RuntimeError on failure
  // Over `data` (numel elements of `dt`, element-aligned), which `owner`
  // keeps valid until it is destroyed with the tensor. Not copied.
  TensorObj(DType dt, Shape s, void* data, std::unique_ptr<ExternalStorage> owner);
  ~TensorObj() override;
  TensorObj(const TensorObj&) = delete;
  TensorObj& operator=(const TensorObj&) = delete;

  // The elements: numel * dtype_size(dtype) bytes, 64-byte aligned, on the
  // host. Where a device holds them (device_copy), they are copied back
  // first and the device's copy dropped (device_copy.h).
  void* data() const {
    if (device_copy) fetch();
    return data_;
  }
  // The host buffer as it is, stale or not (the device backend's copies).
  void* host_buffer() const { return data_; }
  // Where the buffer pointer and the device copy live in the object, which
  // compiled traces read at measured offsets (codegen/host/object_layout.h).
  void* const* data_slot() const { return &data_; }
  DeviceCopy* const* device_copy_slot() const { return &device_copy; }

  size_t rank() const { return shape.size(); }
  size_t nbytes() const { return static_cast<size_t>(numel) * dtype_size(dtype); }
  size_t buffer_bytes() const;  // what the buffer was allocated with (vm/tensor/buffer_pool.h)
  template <typename T> T* ptr() { return static_cast<T*>(data()); }
  template <typename T> const T* ptr() const { return static_cast<const T*>(data()); }

  // The device's copy of the elements (owned; null: only the host has them;
  // device_copy.h): while the host buffer is stale, or as a mirror of it.
  // Set by the device backend, dropped by the first host access.
  mutable DeviceCopy* device_copy = nullptr;
  void attach_device_copy(std::unique_ptr<DeviceCopy> copy);

  // Element i (flat index) as double / int64, converting from the dtype.
  double get_f(int64_t i) const;
  int64_t get_i(int64_t i) const;
  // Store element i, rounding to the dtype: floats round to nearest even,
  // ints wrap (two's complement), bool stores value != 0.
  void set_f(int64_t i, double v);
  void set_i(int64_t i, int64_t v);

 private:
  void fetch() const;  // device copy -> host buffer, then the copy is dropped
  void* data_ = nullptr;
  std::unique_ptr<ExternalStorage> external_;  // null: data_ is the VM's (buffer_pool.h)
};

// A new tensor; zero-filled when `zero` (kernels that write every element pass false).
// Adds its element count to tensor_work.
Value make_tensor(DType dt, Shape shape, bool zero = true);

// Elements of the tensors this thread has made since the counter was last
// cleared: the measure of work by which the interpreter's hot-loop counters
// count a loop whose iterations do tensor work as more than one back-edge
// (JitHooks::hotwork_elements). Per thread, as each VM runs on one thread at
// a time.
inline thread_local uint64_t tensor_work = 0;
inline TensorObj& tensor_of(const Value& v) { return *v.as_tensor(); }

// Number of elements of a shape; throws "tensor too large" when the element
// count or byte size of dtype `dt` is absurd.
int64_t shape_numel(const Shape& s, DType dt);
// "[2, 3]"
std::string shape_str(const Shape& s);
// Row-major strides (in elements).
Shape contiguous_strides(const Shape& s);

// A scalar read of element i as a script value: float for float dtypes, int
// for ints, bool for bool.
Value tensor_element_value(const TensorObj& t, int64_t i);

}  // namespace tessera
