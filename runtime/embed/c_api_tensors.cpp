// The C ABI (include/tessera/tessera.h): tensors, wrapped host memory and
// DLPack. Zero copy is the rule: a wrapped buffer or an imported DLPack
// tensor becomes the tensor's storage (ExternalStorage gives it back), and
// an export shares the storage and keeps the tensor alive until the
// consumer's deleter call. Only strides that are not row-major, or an
// address not aligned to the element, are copied, and counted.
#include <dlpack/dlpack.h>

#include <cstring>

#include "runtime/embed/c_api_support.h"
#include "vm/tensor/tensor.h"

using namespace tessera;
using namespace tessera::embed;

namespace {

// DLPack 0.6 has no bool code; bools travel as uint8 0/1 (kDLBool, 6, in
// later versions, is taken too).
constexpr uint8_t kDLBoolCode = 6;

struct WrappedStorage final : ExternalStorage {
  void (*release)(void*);
  void* user;
  WrappedStorage(void (*r)(void*), void* u) : release(r), user(u) {}
  ~WrappedStorage() override {
    if (release) release(user);
  }
};

struct DLPackStorage final : ExternalStorage {
  DLManagedTensor* tensor;
  explicit DLPackStorage(DLManagedTensor* t) : tensor(t) {}
  ~DLPackStorage() override {
    if (tensor->deleter) tensor->deleter(tensor);
  }
};

// What an exported DLManagedTensor owns: a reference to the tensor (which
// keeps its storage), and the shape and strides DLPack points at.
struct ExportContext {
  Value tensor;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed{};
};



tsr_status check_shape(tsr_vm& m, const int64_t* shape, size_t rank, DType dt, Shape& out) {
  if (rank != 0 && !shape) return null_argument(m, "shape");
  if (rank > kMaxRank) return m.fail(TSR_EINVAL, "tensor rank must be at most 8, got " + std::to_string(rank));
  out.assign(shape, shape + rank);
  try {
    shape_numel(out, dt);
  } catch (const RuntimeError& e) {
    return m.fail(TSR_EINVAL, e.what());
  }
  return TSR_SUCCESS;
}

std::optional<DType> dtype_of(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
  if (t.code == kDLFloat && t.bits == 32) return DType::F32;
  if (t.code == kDLFloat && t.bits == 16) return DType::F16;
  if (t.code == kDLBfloat && t.bits == 16) return DType::BF16;
  if (t.code == kDLInt && t.bits == 32) return DType::I32;
  if (t.code == kDLInt && t.bits == 64) return DType::I64;
  if ((t.code == kDLUInt || t.code == kDLBoolCode) && t.bits == 8) return DType::Bool;
  return std::nullopt;
}

DLDataType dl_dtype(DType d) {
  switch (d) {
    case DType::F32: return {kDLFloat, 32, 1};
    case DType::F16: return {kDLFloat, 16, 1};
    case DType::BF16: return {kDLBfloat, 16, 1};
    case DType::I32: return {kDLInt, 32, 1};
    case DType::I64: return {kDLInt, 64, 1};
    case DType::Bool: return {kDLUInt, 8, 1};
  }
  return {kDLFloat, 32, 1};
}

// DLPack's 8-bit unsigned ints and bools are both Tessera bools (before
// DLPack 0.8 bools travelled as uint8: PyTorch 1.x, Tessera's own exports),
// but only by value: a byte other than 0 and 1 is refused rather than read
// as a bool (2 would print true and sum as 2). Returns the message, or "".
std::string bytes_that_are_not_bools(const uint8_t* bytes, int64_t n, DLDataType t) {
  for (int64_t i = 0; i < n; ++i)
    if (bytes[i] > 1)
      return "DLPack " + std::string(t.code == kDLBoolCode ? "bool" : "uint8") + " element " + std::to_string(i) +
             " is " + std::to_string(bytes[i]) +
             ": Tessera has no uint8 dtype (its dtypes: f32 f16 bf16 i32 i64 bool) and takes 8-bit unsigned data "
             "only as bools, each 0 or 1; convert it first (NumPy: astype(np.bool_) or astype(np.int32))";
  return {};
}

// Strides (in elements) are row-major, or null, or irrelevant (dims of 1).
bool row_major(const DLTensor& t) {
  if (!t.strides) return true;
  int64_t expect = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expect) return false;
    expect *= t.shape[i];
  }
  return true;
}

// Copies a strided DLPack tensor into `dst` (row-major), element by element.
void copy_strided(const DLTensor& t, const char* base, size_t esize, char* dst, int64_t numel) {
  std::vector<int64_t> index(static_cast<size_t>(t.ndim), 0);
  for (int64_t k = 0; k < numel; ++k) {
    int64_t off = 0;
    for (int d = 0; d < t.ndim; ++d) off += index[d] * t.strides[d];
    std::memcpy(dst + k * static_cast<int64_t>(esize), base + off * static_cast<int64_t>(esize), esize);
    for (int d = t.ndim - 1; d >= 0; --d) {
      if (++index[d] < t.shape[d]) break;
      index[d] = 0;
    }
  }
}

// The checks a new tensor's arguments share: `out`, the dtype and the shape.
tsr_status new_tensor_args(tsr_vm& m, const tsr_dtype& dtype, const int64_t* shape, size_t rank, tsr_value* out, DType& dt,
                           Shape& s) {
  if (!out) return null_argument(m, "out");
  out->id = 0;
  const int raw = raw_enum(dtype);
  if (raw < 0 || raw >= kNumDTypes) return m.fail(TSR_EINVAL, "unknown dtype " + std::to_string(raw));
  dt = static_cast<DType>(raw);
  return check_shape(m, shape, rank, dt, s);
}

tsr_status tensor_of(tsr_vm& m, tsr_value t, TensorObj*& out) {
  Value* v = lookup(m, t, "tensor");
  if (!v) return TSR_EINVAL;
  if (!v->is_tensor()) return wrong_type(m, "tensor", *v);
  out = v->as_tensor();
  return TSR_SUCCESS;
}

}  // namespace

extern "C" {

tsr_status tsr_new_tensor(tsr_vm* vm, tsr_dtype dtype, const int64_t* shape, size_t rank, tsr_value* out) {
  return with_vm(vm, [&](tsr_vm& m) {
    DType dt;
    Shape s;
    if (tsr_status st = new_tensor_args(m, dtype, shape, rank, out, dt, s)) return st;
    return give(m, make_tensor(dt, std::move(s)), out);
  });
}

tsr_status tsr_wrap_tensor(tsr_vm* vm, tsr_dtype dtype, const int64_t* shape, size_t rank, void* data,
                           void (*release)(void*), void* release_user, tsr_value* out) {
  return with_vm(vm, [&](tsr_vm& m) {
    DType dt;
    Shape s;
    if (tsr_status st = new_tensor_args(m, dtype, shape, rank, out, dt, s)) return st;
    const int64_t numel = shape_numel(s, dt);
    if (!data && numel != 0) return null_argument(m, "data");
    if (reinterpret_cast<uintptr_t>(data) % dtype_size(dt) != 0)
      return m.fail(TSR_EINVAL, std::string("data is not aligned to its elements (") + dtype_name(dt) + ": " +
                                    std::to_string(dtype_size(dt)) + " bytes)");
    if (numel == 0) {  // nothing to share: a tensor of its own, and the memory goes back now
      Value t = make_tensor(dt, std::move(s));
      if (release) release(release_user);
      return give(m, std::move(t), out);
    }
    auto owner = std::make_unique<WrappedStorage>(release, release_user);
    Value t = Value::adopt(new TensorObj(dt, std::move(s), data, std::move(owner)));
    ++m.counters.tensors_wrapped;
    return give(m, std::move(t), out);
  });
}

tsr_status tsr_tensor_info(tsr_vm* vm, tsr_value t, tsr_dtype* dtype, size_t* rank, int64_t* shape) {
  return with_vm(vm, [&](tsr_vm& m) {
    TensorObj* tensor = nullptr;
    if (tsr_status st = tensor_of(m, t, tensor)) return st;
    if (dtype) *dtype = static_cast<tsr_dtype>(tensor->dtype);
    if (rank) *rank = tensor->rank();
    if (shape) std::copy(tensor->shape.begin(), tensor->shape.end(), shape);
    return m.ok();
  });
}

tsr_status tsr_tensor_data(tsr_vm* vm, tsr_value t, void** data, size_t* nbytes) {
  return with_vm(vm, [&](tsr_vm& m) {
    if (!data) return null_argument(m, "data");
    TensorObj* tensor = nullptr;
    if (tsr_status st = tensor_of(m, t, tensor)) return st;
    *data = tensor->data();  // a device's copy comes back first
    if (nbytes) *nbytes = tensor->nbytes();
    return m.ok();
  });
}

tsr_status tsr_tensor_from_dlpack(tsr_vm* vm, DLManagedTensor* managed, tsr_value* out) {
  return with_vm(vm, [&](tsr_vm& m) {
    if (!out) return null_argument(m, "out");
    out->id = 0;
    if (!managed) return null_argument(m, "tensor");
    const DLTensor& t = managed->dl_tensor;
    if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost)
      return m.fail(TSR_EINVAL, "only host (kDLCPU) DLPack tensors can be imported, got device type " +
                                    std::to_string(static_cast<int>(t.device.device_type)));
    auto dt = dtype_of(t.dtype);
    if (!dt)
      return m.fail(TSR_ETYPE, "DLPack dtype (code " + std::to_string(t.dtype.code) + ", " +
                                   std::to_string(t.dtype.bits) + " bits, " + std::to_string(t.dtype.lanes) +
                                   " lanes) is not a Tessera dtype (f32 f16 bf16 i32 i64 bool)");
    if (t.ndim < 0) return m.fail(TSR_EINVAL, "DLPack tensor has a negative ndim");
    Shape s;
    if (tsr_status st = check_shape(m, t.shape, static_cast<size_t>(t.ndim), *dt, s)) return st;
    const int64_t numel = shape_numel(s, *dt);
    const size_t esize = dtype_size(*dt);
    char* base = static_cast<char*>(t.data) + t.byte_offset;
    if (!t.data && numel != 0) return m.fail(TSR_EINVAL, "DLPack tensor has no data");
    Value tensor;
    const bool bools = *dt == DType::Bool;
    if (numel != 0 && row_major(t) && reinterpret_cast<uintptr_t>(base) % esize == 0) {
      if (bools)
        if (std::string bad = bytes_that_are_not_bools(reinterpret_cast<const uint8_t*>(base), numel, t.dtype);
            !bad.empty())
          return m.fail(TSR_ETYPE, bad);
      tensor = Value::adopt(new TensorObj(*dt, std::move(s), base, std::make_unique<DLPackStorage>(managed)));
      ++m.counters.tensors_wrapped;
    } else {
      tensor = make_tensor(*dt, s, false);
      TensorObj& dst = tensor_of(tensor);
      if (numel != 0) {
        if (t.strides) copy_strided(t, base, esize, static_cast<char*>(dst.host_buffer()), numel);
        else std::memcpy(dst.host_buffer(), base, dst.nbytes());
      }
      if (bools)  // checked in the copy, before the producer's tensor is taken over
        if (std::string bad = bytes_that_are_not_bools(static_cast<const uint8_t*>(dst.host_buffer()), numel, t.dtype);
            !bad.empty())
          return m.fail(TSR_ETYPE, bad);
      m.counters.tensor_bytes_copied += static_cast<int64_t>(dst.nbytes());
      if (managed->deleter) managed->deleter(managed);  // taken over: done with it
    }
    return give(m, std::move(tensor), out);
  });
}

tsr_status tsr_tensor_to_dlpack(tsr_vm* vm, tsr_value t, DLManagedTensor** out) {
  return with_vm(vm, [&](tsr_vm& m) {
    if (!out) return null_argument(m, "out");
    *out = nullptr;
    TensorObj* tensor = nullptr;
    if (tsr_status st = tensor_of(m, t, tensor)) return st;
    auto ctx = std::make_unique<ExportContext>();
    ctx->tensor = Value::borrow(tensor);
    ctx->shape = tensor->shape;
    ctx->strides = contiguous_strides(tensor->shape);
    DLTensor& dl = ctx->managed.dl_tensor;
    dl.data = tensor->data();  // a device's copy comes back first
    dl.device = {kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(tensor->rank());
    dl.dtype = dl_dtype(tensor->dtype);
    dl.shape = ctx->shape.data();
    dl.strides = ctx->strides.data();
    dl.byte_offset = 0;
    ctx->managed.manager_ctx = ctx.get();
    ctx->managed.deleter = [](DLManagedTensor* self) { delete static_cast<ExportContext*>(self->manager_ctx); };
    ++m.counters.tensors_exported;
    *out = &ctx.release()->managed;
    return m.ok();
  });
}

}  // extern "C"
