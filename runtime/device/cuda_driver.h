// CudaDriver: the CUDA driver API (libcuda), loaded at run time with dlopen
// so that the binary never links it and runs on machines without a GPU.
// The entry points are resolved through cuGetProcAddress (the driver's own
// versioned lookup) from the table in cuda_driver_api.def.
//
// A driver that cannot serve (no libcuda, the toolkit's stub library, no
// device, an entry point missing) is not an error here: available() is false
// and why_unavailable() says why in a sentence a user can act on. Callers
// decide whether that is fatal (--device=gpu) or means "use the CPU".
//
// Built without the CUDA headers (TESSERA_NO_CUDA_HEADERS, when CMake did not
// find cuda.h) the class has no entry points and is never available.
#pragma once

#include <string>
#include <vector>

#ifndef TESSERA_NO_CUDA_HEADERS
#include <cuda.h>
#include <cudaTypedefs.h>
#endif

#include "runtime/device/device_error.h"
#include "runtime/device/dynamic_library.h"

namespace tessera::device {

// A CUDA version number (1000 * major + 10 * minor, as cuDriverGetVersion
// gives it) as "13.0".
std::string cuda_version_text(int version);

class CudaDriver : public OptionalLibrary {
 public:
  // The process's driver: loaded on first use (thread-safe), from the file
  // named by $TESSERA_CUDA_DRIVER if set, else libcuda.so.1, then libcuda.so.
  // Never unloaded.
  static const CudaDriver& get();
  // The library names get() tries, in order (reads the environment).
  static std::vector<std::string> default_candidates();

  // Loads the first of `candidates` that opens and initializes it (cuInit).
  // Not the process's driver: for tests and tools that point at one file.
  explicit CudaDriver(const std::vector<std::string>& candidates);
  explicit CudaDriver(const std::string& path) : CudaDriver(std::vector<std::string>{path}) {}

  // available(), why_unavailable() (e.g. "libcuda.so.1 not found (dlopen:
  // ...): no NVIDIA driver on this machine") and library() are
  // OptionalLibrary's.

  // cuDriverGetVersion (1000 * major + 10 * minor; 0 when unknown), and as
  // "13.0".
  int version() const { return version_; }
  std::string version_text() const { return cuda_version_text(version_); }

#ifndef TESSERA_NO_CUDA_HEADERS
  // Throws DeviceError "WHAT: CUDA_ERROR_NAME (the driver's description)"
  // unless `r` is CUDA_SUCCESS. `what` names the call and its subject, e.g.
  // "cuModuleLoadData(kernel-region-1a2b)".
  void check(CUresult r, const char* what) const;
  // "CUDA_ERROR_NAME (description)", or "CUresult N" when the driver cannot
  // name it.
  std::string error_text(CUresult r) const;

  // The entry points. Call them only when available(): a driver that failed
  // to initialize may have some of them set.
#define CUDA_FN(name, pfn, version) pfn name = nullptr;
#include "runtime/device/cuda_driver_api.def"
#undef CUDA_FN
#endif

 private:
  void load(const std::vector<std::string>& candidates);

  int version_ = 0;
};

}  // namespace tessera::device
