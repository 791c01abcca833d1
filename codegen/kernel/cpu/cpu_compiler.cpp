#include "codegen/kernel/cpu/cpu_compiler.h"

#include <chrono>

#include "codegen/llvm_library/llvm_library.h"
#include "vm/tensor/vector_math.h"

namespace tessera::kir {

CpuKernelCompiler::CpuKernelCompiler()
    : backend_(jit::llvm_library().make_kernel_compiler()),
      host_(backend_->host_identity() + " lanes=" + std::to_string(lanes())) {}

CpuKernelCompiler::~CpuKernelCompiler() = default;

int CpuKernelCompiler::lanes() const { return vmath::table().lanes; }

CompiledKernel CpuKernelCompiler::compile(const Kernel& k) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string symbol = "kernel_" + k.name + "_" + std::to_string(next_id_++);
  KernelObject obj = compile_object(k, symbol, keep_text_);
  CompiledKernel out;
  out.fn = load(obj.bytes, obj.symbol);
  out.llvm_ir = std::move(obj.llvm_ir);
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

KernelObject CpuKernelCompiler::compile_object(const Kernel& k, const std::string& symbol, bool keep_text) {
  return backend_->compile_object(k, symbol, lanes(), keep_text);
}

KernelFn CpuKernelCompiler::load(const std::string& bytes, const std::string& symbol) {
  return backend_->load(bytes, symbol);
}

std::string CpuKernelCompiler::llvm_ir(const Kernel& k) { return backend_->llvm_ir(k, lanes()); }

}  // namespace tessera::kir
