// LlvmKernelCompiler: cpu_emitter's module, verified, through a function
// pipeline, to an object file; objects linked by an LLJIT of its own.
#include "codegen/kernel/cpu/llvm_kernel_compiler.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Scalar/SROA.h>

#include <chrono>
#include <mutex>
#include <stdexcept>

#include "codegen/kernel/cpu/cpu_emitter.h"
#include "codegen/kernel/cpu/kernel_abi.h"
#include "codegen/llvm_library/llvm_error.h"
#include "codegen/llvm_library/llvm_pass_run.h"

namespace tessera::kir {

namespace {

template <typename T>
T unwrap(llvm::Expected<T> v, const char* what) {
  return jit::llvm_unwrap(std::move(v), "cpu kernel compiler", what);
}

class LlvmKernelCompiler final : public CpuKernelBackend {
 public:
  LlvmKernelCompiler();
  KernelObject compile_object(const Kernel& k, const std::string& symbol, int lanes, bool keep_text) override;
  KernelFn load(const std::string& bytes, const std::string& symbol) override;
  std::string llvm_ir(const Kernel& k, int lanes) override;
  const std::string& host_identity() const override { return host_; }

 private:
  std::unique_ptr<llvm::TargetMachine> tm_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::mutex mu_;  // one compile at a time per compiler
  uint64_t next_dylib_ = 0;
  std::string host_;

  // The kernel's LLVM module, verified and optimized.
  std::unique_ptr<llvm::Module> build(const Kernel& k, const std::string& symbol, llvm::LLVMContext& ctx,
                                      int lanes) {
    std::unique_ptr<llvm::Module> mod = emit_cpu_kernel(k, symbol, ctx, CpuTarget{lanes});
    mod->setDataLayout(jit_->getDataLayout());
    mod->setTargetTriple(jit_->getTargetTriple().str());
    std::string msg;
    llvm::raw_string_ostream vos(msg);
    if (llvm::verifyModule(*mod, &vos))
      throw std::runtime_error("cpu kernel compiler: kernel @" + k.name + ": invalid LLVM IR: " + msg);
    optimize(*mod);
    return mod;
  }

  void optimize(llvm::Module& m) {
    jit::run_passes(m, tm_.get(), [](llvm::PassBuilder&) {
      // A function pipeline, not O2's: the emitter's code is already vector
      // code in simple loops; this promotes the loop-carried slots to
      // registers, hoists the splats and cleans up, at a fraction of O2's
      // compile time (kernels compile while the program waits).
      llvm::FunctionPassManager fpm;
      fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
      jit::add_cleanup_passes(fpm);
      llvm::ModulePassManager mpm;
      mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
      return mpm;
    });
  }
};

LlvmKernelCompiler::LlvmKernelCompiler() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto jtmb = unwrap(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Less);
  tm_ = unwrap(jtmb.createTargetMachine(), "creating the target machine");
  // Generated code calls SLEEF by name: the process's symbols resolve it;
  // and the runtime's own functions (kernel_abi.h), defined here.
  jit_ = unwrap(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create(), "creating LLJIT");
  const llvm::JITSymbolFlags fn_flags = llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable;
  if (llvm::Error e = jit_->getProcessSymbolsJITDylib()->define(llvm::orc::absoluteSymbols(
          {{jit_->mangleAndIntern("tessera_kernel_dot_f32"),
            {llvm::orc::ExecutorAddr::fromPtr(&tessera_kernel_dot_f32), fn_flags}}})))
    unwrap(llvm::Expected<int>(std::move(e)), "defining the runtime's functions");
  host_ = "llvm=" LLVM_VERSION_STRING " triple=" + tm_->getTargetTriple().str() + " cpu=" + tm_->getTargetCPU().str() +
          " features=" + tm_->getTargetFeatureString().str();
}

KernelObject LlvmKernelCompiler::compile_object(const Kernel& k, const std::string& symbol, int lanes, bool keep_text) {
  const auto t0 = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> mod = build(k, symbol, ctx, lanes);
  KernelObject out;
  out.symbol = symbol;
  if (keep_text) {
    llvm::raw_string_ostream os(out.llvm_ir);
    mod->print(os, nullptr);
  }
  llvm::orc::SimpleCompiler codegen(*tm_);
  std::unique_ptr<llvm::MemoryBuffer> obj = unwrap(codegen(*mod), "generating code");
  out.bytes.assign(obj->getBufferStart(), obj->getBufferSize());
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

KernelFn LlvmKernelCompiler::load(const std::string& bytes, const std::string& symbol) {
  std::lock_guard<std::mutex> lock(mu_);
  llvm::Expected<llvm::orc::JITDylib&> made = jit_->createJITDylib("kernel" + std::to_string(next_dylib_++));
  if (!made) unwrap(llvm::Expected<int>(made.takeError()), "creating a JITDylib");
  llvm::orc::JITDylib& jd = *made;
  // Generated code calls SLEEF by name: the process's symbols resolve it.
  jd.addToLinkOrder(*jit_->getProcessSymbolsJITDylib());
  if (llvm::Error e = jit_->addObjectFile(
          jd, llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(bytes.data(), bytes.size()), symbol))) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << std::move(e);
    throw std::runtime_error("cpu kernel compiler: loading " + symbol + ": " + text);
  }
  return unwrap(jit_->lookup(jd, symbol), "looking up the kernel").toPtr<KernelFn>();
}

std::string LlvmKernelCompiler::llvm_ir(const Kernel& k, int lanes) {
  std::lock_guard<std::mutex> lock(mu_);
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> mod = build(k, "kernel_" + k.name, ctx, lanes);
  std::string text;
  llvm::raw_string_ostream os(text);
  mod->print(os, nullptr);
  return text;
}

}  // namespace

std::unique_ptr<CpuKernelBackend> make_llvm_kernel_compiler() { return std::make_unique<LlvmKernelCompiler>(); }

}  // namespace tessera::kir
