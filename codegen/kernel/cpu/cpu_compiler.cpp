#include "codegen/kernel/cpu/cpu_compiler.h"

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
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>

#include <chrono>
#include <mutex>
#include <stdexcept>

#include "codegen/kernel/cpu/cpu_emitter.h"
#include "codegen/kernel/cpu/kernel_abi.h"
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
  std::string host;

  // The kernel's LLVM module, verified and optimized.
  std::unique_ptr<llvm::Module> build(const Kernel& k, const std::string& symbol, llvm::LLVMContext& ctx,
                                      int lanes) {
    std::unique_ptr<llvm::Module> mod = emit_cpu_kernel(k, symbol, ctx, CpuTarget{lanes});
    mod->setDataLayout(jit->getDataLayout());
    mod->setTargetTriple(jit->getTargetTriple().str());
    std::string msg;
    llvm::raw_string_ostream vos(msg);
    if (llvm::verifyModule(*mod, &vos))
      throw std::runtime_error("cpu kernel compiler: kernel @" + k.name + ": invalid LLVM IR: " + msg);
    optimize(*mod);
    return mod;
  }

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
  // Generated code calls SLEEF by name: the process's symbols resolve it;
  // and the runtime's own functions (kernel_abi.h), defined here.
  impl_->jit = unwrap(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create(), "creating LLJIT");
  const llvm::JITSymbolFlags fn_flags = llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable;
  if (llvm::Error e = impl_->jit->getProcessSymbolsJITDylib()->define(llvm::orc::absoluteSymbols(
          {{impl_->jit->mangleAndIntern("tessera_kernel_dot_f32"),
            {llvm::orc::ExecutorAddr::fromPtr(&tessera_kernel_dot_f32), fn_flags}}})))
    unwrap(llvm::Expected<int>(std::move(e)), "defining the runtime's functions");
  impl_->host = "llvm=" LLVM_VERSION_STRING " triple=" + impl_->tm->getTargetTriple().str() +
                " cpu=" + impl_->tm->getTargetCPU().str() + " features=" + impl_->tm->getTargetFeatureString().str() +
                " lanes=" + std::to_string(lanes());
}

const std::string& CpuKernelCompiler::host_identity() const { return impl_->host; }

CpuKernelCompiler::~CpuKernelCompiler() = default;

int CpuKernelCompiler::lanes() const { return vmath::table().lanes; }

CompiledKernel CpuKernelCompiler::compile(const Kernel& k) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string symbol;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    symbol = "kernel_" + k.name + "_" + std::to_string(impl_->next_id++);
  }
  KernelObject obj = compile_object(k, symbol, keep_text_);
  CompiledKernel out;
  out.fn = load(obj.bytes, obj.symbol);
  out.llvm_ir = std::move(obj.llvm_ir);
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

KernelObject CpuKernelCompiler::compile_object(const Kernel& k, const std::string& symbol, bool keep_text) {
  const auto t0 = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(impl_->mu);
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> mod = impl_->build(k, symbol, ctx, lanes());
  KernelObject out;
  out.symbol = symbol;
  if (keep_text) {
    llvm::raw_string_ostream os(out.llvm_ir);
    mod->print(os, nullptr);
  }
  llvm::orc::SimpleCompiler codegen(*impl_->tm);
  std::unique_ptr<llvm::MemoryBuffer> obj = unwrap(codegen(*mod), "generating code");
  out.bytes.assign(obj->getBufferStart(), obj->getBufferSize());
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

KernelFn CpuKernelCompiler::load(const std::string& bytes, const std::string& symbol) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  llvm::Expected<llvm::orc::JITDylib&> made = impl_->jit->createJITDylib("kernel" + std::to_string(impl_->next_id++));
  if (!made) unwrap(llvm::Expected<int>(made.takeError()), "creating a JITDylib");
  llvm::orc::JITDylib& jd = *made;
  // Generated code calls SLEEF by name: the process's symbols resolve it.
  jd.addToLinkOrder(*impl_->jit->getProcessSymbolsJITDylib());
  if (llvm::Error e = impl_->jit->addObjectFile(
          jd, llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(bytes.data(), bytes.size()), symbol))) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << std::move(e);
    throw std::runtime_error("cpu kernel compiler: loading " + symbol + ": " + text);
  }
  return unwrap(impl_->jit->lookup(jd, symbol), "looking up the kernel").toPtr<KernelFn>();
}

std::string CpuKernelCompiler::llvm_ir(const Kernel& k) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> mod = impl_->build(k, "kernel_" + k.name, ctx, lanes());
  std::string text;
  llvm::raw_string_ostream os(text);
  mod->print(os, nullptr);
  return text;
}

}  // namespace tessera::kir
