#include "runtime/device/cuda_kernel_compiler.h"

namespace tessera::device {

std::vector<std::string> CudaKernelCompiler::options(const std::string& arch) {
  return {"-arch=" + arch, "-std=c++17", "--ptxas-options=-v"};
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
