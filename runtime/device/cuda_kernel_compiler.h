// Generated CUDA C++ (codegen/kernel/cuda/cuda_emitter.h) compiled by NVRTC
// for one GPU architecture: the source with the wrapper header handed to
// NVRTC in memory, the options the backend always uses, the cubin (or PTX
// for a compute_XX target, the fallback the driver JIT-compiles) and
// ptxas's register and spill report. identity() is everything the output
// depends on, the key of the persistent kernel cache.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel/cuda/cuda_emitter.h"
#include "runtime/device/nvrtc_library.h"
#include "runtime/device/ptxas_report.h"

namespace tessera::device {

struct CudaCompiled {
  bool ok = false;
  std::string arch;                   // sm_90a, sm_80, compute_90, ...
  std::string cubin, ptx;             // one of them, by the arch
  std::string log;                    // NVRTC's log (errors, warnings, ptxas -v)
  std::optional<PtxasReport> report;  // registers, spills (cubin targets)
  double ms = 0;
};

class CudaKernelCompiler {
 public:
  explicit CudaKernelCompiler(const NvrtcLibrary& nvrtc = NvrtcLibrary::get()) : nvrtc_(nvrtc) {}

  // The NVRTC options for an architecture: -arch, ptxas -v for the report,
  // C++17; no fast-math (results stay within the interpreter's tolerance).
  static std::vector<std::string> options(const std::string& arch);

  // Never throws on a compile error (ok = false, the log says why); throws
  // DeviceError when NVRTC is unavailable.
  CudaCompiled compile(const kir::CudaKernelSource& src, const std::string& arch) const;

  // The source, the wrapper header, the options, the arch and NVRTC's
  // version, as one string (hashed by the kernel cache).
  std::string identity(const kir::CudaKernelSource& src, const std::string& arch) const;

 private:
  const NvrtcLibrary& nvrtc_;
};

}  // namespace tessera::device
