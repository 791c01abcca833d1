// Cupti: NVIDIA's profiling library (libcupti), loaded with dlopen like the
// driver, NVRTC and cuBLASLt (nothing links it), and only where a GPU runs
// Tessera's kernels: on a machine without one nothing of it is loaded. The
// entry points are the rows of cupti_api.def; what uses them is
// kernel_activity.h (the kernels' records) and kernel_metrics.h (metrics
// on demand).
//
// The host emulation has no CUPTI; a test double of its subset, named by
// $TESSERA_CUPTI_LIBRARY, stands in for it there (tests/runtime/device/
// cupti_double.cpp). The double learns of the emulation's launches through
// one more entry point that the real library lacks (emulation_hook()), as
// CUPTI learns of a GPU's through the driver.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device/dynamic_library.h"
#include "runtime/device/emulated_kernel_hook.h"

namespace tessera::device {

class Cupti : public OptionalLibrary {
 public:
  // The process's CUPTI ($TESSERA_CUPTI_LIBRARY, else libcupti.so.13,
  // $CUDA_HOME/lib64/libcupti.so.13, /usr/local/cuda/lib64/libcupti.so.13,
  // /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13). Loaded on first
  // call, never unloaded (CUPTI registers its own teardown with the driver).
  static const Cupti& get();
  static std::vector<std::string> default_candidates();
  explicit Cupti(const std::vector<std::string>& candidates);
  ~Cupti();

  uint32_t version() const { return version_; }  // CUPTI's API version, e.g. 130001
  // "CUPTI 13.0 (API 130001, /usr/local/cuda/lib64/libcupti.so.13)".
  std::string describe() const;
  // Whether the metrics' entry points are all there; else why_no_metrics().
  bool has_metrics() const { return why_no_metrics_.empty(); }
  const std::string& why_no_metrics() const { return why_no_metrics_; }
  // The emulation's stand-in for the driver's instrumentation: a double's
  // tesseraEmulatedKernelRan; null for the real library.
  EmulatedKernelHook emulation_hook() const { return hook_; }

  // The entry points (CUPTI's own types; cupti_library.cpp and the files
  // that drive them include the CUPTI headers).
  struct Api;
  const Api& api() const { return *api_; }
  // "CUPTI_ERROR_NAME" for a CUptiResult (cuptiGetResultString).
  std::string error_text(int result) const;
  // Throws DeviceError "WHAT: ERROR" unless `result` is CUPTI_SUCCESS.
  void check(int result, const char* what) const;

 private:
  std::unique_ptr<Api> api_;
  uint32_t version_ = 0;
  std::string why_no_metrics_;
  EmulatedKernelHook hook_ = nullptr;
};

}  // namespace tessera::device
