// Runs a pass pipeline over a module with LLVM's analyses registered for a
// target machine: what both LLVM compilers (T2's, the CPU kernels') do after
// emitting a module. Part of the LLVM library (includes LLVM).
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>

#include <functional>

namespace tessera::jit {

// `pipeline` builds the module pipeline (it may use the PassBuilder's
// default pipelines); the analysis managers live for the run only.
void run_passes(llvm::Module& m, llvm::TargetMachine* tm,
                const std::function<llvm::ModulePassManager(llvm::PassBuilder&)>& pipeline);

// EarlyCSE (MemorySSA), InstCombine, SimplifyCFG, LICM, InstCombine,
// SimplifyCFG: the clean-up both compilers run on code that is already a
// simple loop (each says why it is enough).
void add_cleanup_passes(llvm::FunctionPassManager& fpm);

}  // namespace tessera::jit
