#include "runtime/device/cuda_driver.h"

#include <fmt/format.h>

#include <cstdlib>

namespace tessera::device {

std::vector<std::string> CudaDriver::default_candidates() {
  if (const char* env = std::getenv("TESSERA_CUDA_DRIVER"); env && *env) return {env};
  return {"libcuda.so.1", "libcuda.so"};
}

const CudaDriver& CudaDriver::get() {
  // Never destroyed: the driver tears itself down at exit, and unloading it
  // while a primary context is retained is unsafe. The static pointer keeps
  // it reachable, so LeakSanitizer does not count it.
  static const CudaDriver* driver = new CudaDriver(default_candidates());
  return *driver;
}

CudaDriver::CudaDriver(const std::vector<std::string>& candidates) { load(candidates); }

std::string cuda_version_text(int version) { return fmt::format("{}.{}", version / 1000, (version % 1000) / 10); }

#ifdef TESSERA_NO_CUDA_HEADERS

void CudaDriver::load(const std::vector<std::string>&) {
  why_ =
      "Tessera VM was built without the CUDA headers (cuda.h not found when it was configured): "
      "install the CUDA toolkit and rebuild to use a GPU";
}

#else

std::string CudaDriver::error_text(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (!cuGetErrorName || cuGetErrorName(r, &name) != CUDA_SUCCESS || !name) {
    return fmt::format("CUresult {}", static_cast<int>(r));
  }
  if (!cuGetErrorString || cuGetErrorString(r, &text) != CUDA_SUCCESS || !text) return name;
  return fmt::format("{} ({})", name, text);
}

void CudaDriver::check(CUresult r, const char* what) const {
  if (r == CUDA_SUCCESS) return;
  // The sticky errors of a kernel that faulted: every later call of the
  // context fails with them too (cuda.h's CUDA_ERROR_* 700..719).
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
      throw DeviceFault(fmt::format("{}: {}", what, error_text(r)));
    default: throw DeviceError(fmt::format("{}: {}", what, error_text(r)));
  }
}

void CudaDriver::load(const std::vector<std::string>& candidates) {
  lib_ = DynamicLibrary::open_first(candidates);
  const std::string wanted = candidates.empty() ? "libcuda.so.1" : candidates.front();
  if (!lib_.is_open()) {
    why_ = lib_.not_found()
               ? fmt::format("{} not found (dlopen: {}): no NVIDIA driver on this machine", wanted, lib_.error())
               : fmt::format("{} could not be loaded (dlopen: {}): is the NVIDIA driver installed correctly?",
                             wanted, lib_.error());
    return;
  }
  const std::string& path = lib_.path();
  auto stub = [&](const std::string& step) {
    return fmt::format("{} is the CUDA toolkit's stub library ({}: CUDA_ERROR_STUB_LIBRARY): no NVIDIA driver on this "
                       "machine",
                       path, step);
  };

  // CUDA 12+ exports the lookup with a query result as cuGetProcAddress_v2;
  // 11.3 to 11.8 only the plain one.
  auto lookup_v2 = reinterpret_cast<PFN_cuGetProcAddress_v12000>(lib_.symbol("cuGetProcAddress_v2"));
  auto lookup_v1 = reinterpret_cast<PFN_cuGetProcAddress_v11030>(lib_.symbol("cuGetProcAddress"));
  if (!lookup_v2 && !lookup_v1) {
    why_ = fmt::format("{} has no cuGetProcAddress: the NVIDIA driver is too old (Tessera needs CUDA 11.3 or newer)",
                       path);
    return;
  }
  auto lookup = [&](const char* name, int cuda_version, void** fn, bool& version_too_low) {
    *fn = nullptr;
    version_too_low = false;
    if (!lookup_v2) return lookup_v1(name, fn, cuda_version, CU_GET_PROC_ADDRESS_DEFAULT);
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r = lookup_v2(name, fn, cuda_version, CU_GET_PROC_ADDRESS_DEFAULT, &found);
    version_too_low = found == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    return r;
  };

  // Every row of the table, each with a setter of its member.
  struct Row {
    const char* name;
    int version;
    bool required;  // false: CUDA_FN_OPT, the driver may lack it
    void (*set)(CudaDriver&, void*);
  };
  static constexpr Row kRows[] = {
#define CUDA_FN(name, pfn, version) \
  {#name, version, true, [](CudaDriver& d, void* fn) { d.name = reinterpret_cast<pfn>(fn); }},
#define CUDA_FN_OPT(name, pfn, version) \
  {#name, version, false, [](CudaDriver& d, void* fn) { d.name = reinterpret_cast<pfn>(fn); }},
#include "runtime/device/cuda_driver_api.def"
#undef CUDA_FN_OPT
#undef CUDA_FN
  };
  const Row* missing = nullptr;
  bool missing_version_too_low = false;
  for (const Row& row : kRows) {
    void* fn = nullptr;
    bool too_low = false;
    CUresult r = lookup(row.name, row.version, &fn, too_low);
    if (r == CUDA_ERROR_STUB_LIBRARY) {
      why_ = stub(fmt::format("cuGetProcAddress({})", row.name));
      return;
    }
    if (r != CUDA_SUCCESS || !fn) {
      if (row.required && !missing) {
        missing = &row;
        missing_version_too_low = too_low;
      }
      continue;
    }
    row.set(*this, fn);
  }
  if (cuDriverGetVersion && cuDriverGetVersion(&version_) != CUDA_SUCCESS) version_ = 0;
  if (missing) {
    why_ = fmt::format("entry point {} {}missing from {}: the NVIDIA driver is too old (version {}; Tessera asks for "
                       "the CUDA {}.{} variant)",
                       missing->name, missing_version_too_low ? "(in the variant Tessera needs) " : "", path,
                       version_ ? version_text() : "unknown", missing->version / 1000, (missing->version % 1000) / 10);
    return;
  }

  CUresult r = cuInit(0);
  if (r == CUDA_ERROR_STUB_LIBRARY) {
    why_ = stub("cuInit");
  } else if (r == CUDA_ERROR_NO_DEVICE) {
    why_ = fmt::format("cuInit: CUDA_ERROR_NO_DEVICE: no CUDA device (the NVIDIA driver {} sees no GPU; check "
                       "CUDA_VISIBLE_DEVICES)",
                       version_text());
  } else if (r != CUDA_SUCCESS) {
    why_ = fmt::format("cuInit: {}: the NVIDIA driver {} could not be initialized", error_text(r), version_text());
  } else {
    available_ = true;
  }
}

#endif  // TESSERA_NO_CUDA_HEADERS

}  // namespace tessera::device
