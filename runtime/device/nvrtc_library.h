// NvrtcLibrary: NVRTC, CUDA's run-time C++ compiler, loaded with dlopen (the
// binary never links it). It turns generated CUDA C++ into cubin or PTX and
// needs no GPU, so kernel generation is compiled and tested on any machine
// with the CUDA toolkit.
//
// Like CudaDriver, a missing NVRTC is a state, not an error: available() is
// false and why_unavailable() says why; compile() then throws DeviceError.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/device/device_error.h"
#include "runtime/device/dynamic_library.h"

namespace tessera::device {

// An in-memory header: `#include "name"` in the source reads `source`.
struct NvrtcHeader {
  std::string name, source;
};

struct NvrtcOutput {
  bool ok = false;    // the program compiled
  std::string log;    // NVRTC's log: errors and warnings, and ptxas's -v lines
  std::string cubin;  // with -arch=sm_XX (PTX is then empty)
  std::string ptx;    // with -arch=compute_XX
  double ms = 0;      // wall time of the compile
};

class NvrtcLibrary : public OptionalLibrary {
 public:
  // The process's NVRTC: loaded on first use (thread-safe), from
  // $TESSERA_NVRTC_LIBRARY if set, else the first of default_candidates().
  // Never unloaded.
  static const NvrtcLibrary& get();
  // libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so, $CUDA_HOME/lib64/libnvrtc.so.13,
  // /usr/local/cuda/lib64/libnvrtc.so.13 (or only $TESSERA_NVRTC_LIBRARY).
  static std::vector<std::string> default_candidates();

  // Loads the first of `candidates` that opens. Not the process's NVRTC: for
  // tests that point at one file.
  explicit NvrtcLibrary(const std::vector<std::string>& candidates);
  explicit NvrtcLibrary(const std::string& path) : NvrtcLibrary(std::vector<std::string>{path}) {}
  ~NvrtcLibrary();

  // available(), why_unavailable() and library() are OptionalLibrary's.

  // nvrtcVersion, e.g. {13, 0}; {0, 0} when unavailable.
  std::pair<int, int> version() const { return version_; }
  // The compute capabilities it compiles for, as 10 * major + minor
  // (75, 80, ..., 90, ..., 120); empty when unavailable.
  const std::vector<int>& supported_archs() const { return archs_; }

  // Compiles `source` (program name `name`, which the log's messages cite)
  // with these options; with an -arch=sm_XX option the output has a cubin
  // (and PTX is empty); with compute_XX only PTX. Never throws on a compile
  // error or a rejected option (ok=false, the log has NVRTC's errors); throws
  // DeviceError when NVRTC is unavailable or fails otherwise (out of memory).
  // Thread-safe: every call has its own NVRTC program, and this object does
  // not change after construction (the background compiler calls it).
  NvrtcOutput compile(const std::string& source, const std::string& name, const std::vector<NvrtcHeader>& headers,
                      const std::vector<std::string>& options) const;

 private:
  struct Api;  // the NVRTC entry points, from nvrtc_api.def

  std::unique_ptr<Api> api_;
  std::pair<int, int> version_{0, 0};
  std::vector<int> archs_;
};

}  // namespace tessera::device
