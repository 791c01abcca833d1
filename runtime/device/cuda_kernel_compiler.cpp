#include "runtime/device/cuda_kernel_compiler.h"

namespace tessera::device {

// -maxrregcount=255 with launch bounds of one block per multiprocessor
// (tessera_cuda.h's TSR_BOUNDS): without them NVRTC 13's ptxas capped a
// 256-thread attention kernel at 80 registers and spilled; with them no
// generated kernel of the tests spills (cuda_kernel_nvrtc_test).
std::vector<std::string> CudaKernelCompiler::options(const std::string& arch) {
  return {"-arch=" + arch, "-std=c++17", "-maxrregcount=255", "--ptxas-options=-v"};
}

CudaCompiled CudaKernelCompiler::compile(const kir::CudaKernelSource& src, const std::string& arch) const {
  const NvrtcOutput out = nvrtc_.compile(src.source, src.entry + ".cu", {{"tessera_cuda.h", kir::cuda_wrapper_header()}},
                                         options(arch));
  CudaCompiled c;
  c.ok = out.ok;
  c.arch = arch;
  c.cubin = out.cubin;
  c.ptx = out.ptx;
  c.log = out.log;
  c.ms = out.ms;
  if (out.ok && !out.cubin.empty()) c.report = parse_ptxas_report(out.log, src.entry);
  return c;
}

std::string CudaKernelCompiler::identity(const kir::CudaKernelSource& src, const std::string& arch) const {
  std::string id = "nvrtc " + std::to_string(nvrtc_.version().first) + "." + std::to_string(nvrtc_.version().second) + "\n";
  for (const std::string& o : options(arch)) id += o + "\n";
  return id + kir::cuda_wrapper_header() + "\n" + src.source;
}

}  // namespace tessera::device
