#include "codegen/kernel/cpu/cpu_compiler.h"

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>

#include <chrono>
#include <mutex>
#include <stdexcept>

#include "codegen/kernel/cpu/cpu_emitter.h"
#include "vm/tensor/vector_math.h"

namespace tessera::kir {

namespace {

template <typename T>
T unwrap(llvm::Expected<T> v, const char* what) {
  if (!v) {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    os << v.takeError();
    throw std::runtime_error(std::string("cpu kernel compiler: ") + what + ": " + msg);
  }
  return std::move(*v);
}

}  // namespace

struct CpuKernelCompiler::Impl {
  std::unique_ptr<llvm::TargetMachine> tm;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::mutex mu;  // one compile at a time per compiler
  uint64_t next_id = 0;

  void optimize(llvm::Module& m) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    // A function pipeline, not O2's: the emitter's code is already vector
    // code in simple loops; this promotes the loop-carried slots to
    // registers, hoists the splats and cleans up, at a fraction of O2's
    // compile time (kernels compile while the program waits).
    llvm::FunctionPassManager fpm;
    fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
    fpm.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
    fpm.addPass(llvm::InstCombinePass());
    fpm.addPass(llvm::SimplifyCFGPass());
    fpm.addPass(llvm::createFunctionToLoopPassAdaptor(llvm::LICMPass(llvm::LICMOptions()), /*UseMemorySSA=*/true));
    fpm.addPass(llvm::InstCombinePass());
    fpm.addPass(llvm::SimplifyCFGPass());
    llvm::ModulePassManager mpm;
    mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
    mpm.run(m, mam);
  }
};

CpuKernelCompiler::CpuKernelCompiler() : impl_(std::make_unique<Impl>()) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto jtmb = unwrap(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Less);
  impl_->tm = unwrap(jtmb.createTargetMachine(), "creating the target machine");
  // Generated code calls SLEEF by name: the process's symbols resolve it.
  impl_->jit = unwrap(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create(), "creating LLJIT");
}

CpuKernelCompiler::~CpuKernelCompiler() = default;

int CpuKernelCompiler::lanes() const { return vmath::table().lanes; }

CompiledKernel CpuKernelCompiler::compile(const Kernel& k) {
  const auto t0 = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(impl_->mu);
  const std::string fn_name = "kernel_" + k.name + "_" + std::to_string(impl_->next_id++);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> mod = emit_cpu_kernel(k, fn_name, *ctx, CpuTarget{lanes()});
  mod->setDataLayout(impl_->jit->getDataLayout());
  mod->setTargetTriple(impl_->jit->getTargetTriple().str());
  std::string msg;
  llvm::raw_string_ostream vos(msg);
  if (llvm::verifyModule(*mod, &vos))
    throw std::runtime_error("cpu kernel compiler: kernel @" + k.name + ": invalid LLVM IR: " + msg);
  impl_->optimize(*mod);
  CompiledKernel out;
  if (keep_text_) {
    llvm::raw_string_ostream os(out.llvm_ir);
    mod->print(os, nullptr);
  }
  if (llvm::Error e = impl_->jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx)))) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << std::move(e);
    throw std::runtime_error("cpu kernel compiler: kernel @" + k.name + ": " + text);
  }
  out.fn = unwrap(impl_->jit->lookup(fn_name), "looking up the kernel").toPtr<KernelFn>();
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace tessera::kir
