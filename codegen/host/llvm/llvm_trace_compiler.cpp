// LlvmTraceCompiler: lowering (ir_lowering.cpp and the parts lower_state.h
// lists), the IR pass pipeline of the opt level (llvm_backend.h), and
// native code through LLJIT.
#include "codegen/host/llvm/llvm_trace_compiler.h"

#include "tracer/ir_verify.h"

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectTransformLayer.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstring>
#include <deque>
#include <stdexcept>

#include "codegen/host/code_data.h"
#include "codegen/host/llvm/ir_lowering.h"
#include "codegen/host/llvm/object_disassembly.h"
#include "codegen/host/lowering_env.h"
#include "codegen/host/object_layout.h"
#include "codegen/llvm_library/llvm_error.h"
#include "codegen/llvm_library/llvm_pass_run.h"

namespace tessera::jit {
namespace {

template <typename T>
T unwrap(llvm::Expected<T> e, const char* what) {
  return llvm_unwrap(std::move(e), "llvm backend", what);
}

llvm::OptimizationLevel pass_level(int opt) {
  switch (opt) {
    case 1: return llvm::OptimizationLevel::O1;
    case 2: return llvm::OptimizationLevel::O2;
    default: return llvm::OptimizationLevel::O3;
  }
}

// Level 2 (the default) pairs the trace pipeline with the code generator's
// "Less" level: on the benchmark suite the code runs as fast as with O2 and
// "Default", and compiling takes about a third less time.
llvm::CodeGenOptLevel codegen_level(int opt) {
  switch (opt) {
    case 0: return llvm::CodeGenOptLevel::None;
    case 1:
    case 2: return llvm::CodeGenOptLevel::Less;
    default: return llvm::CodeGenOptLevel::Aggressive;
  }
}

// The passes a trace needs, in one function pipeline: a trace is a single
// function with one loop and many cold exit blocks, and the whole-module
// default pipeline's inliner, interprocedural and vectorizer passes find
// nothing to do in it but still cost their time. The trace optimizer has
// already done the trace-level CSE, load forwarding and hoisting; these
// clean up the lowering (tag and payload loads, reference-count blocks,
// exit stores). GVN and DSE were measured and dropped: on the benchmark
// suite they made compiling 7-45% slower and the code ran no faster.
llvm::FunctionPassManager trace_function_pipeline() {
  llvm::FunctionPassManager fpm;
  add_cleanup_passes(fpm);
  return fpm;
}

// Each instance owns one LLJIT; compiled traces stay valid as long as it
// lives. Not thread-safe (LlvmBackend says who may call it).
class LlvmTraceCompiler final : public HostBackend {
 public:
  explicit LlvmTraceCompiler(int opt_level);
  const char* name() const override { return "llvm"; }
  using HostBackend::compile;
  CompiledTrace compile(const TraceIR& ir, const std::string& name, const ExitLinking& linking,
                        const FunctionProto* proto, const uint8_t* global_watch) override;
  void set_keep_text(bool keep) override { keep_text = keep; }

 private:
  int opt_level;
  ObjectLayout layout;
  std::unique_ptr<llvm::TargetMachine> tm;  // for the IR pipeline's cost model
  std::unique_ptr<llvm::orc::LLJIT> jit;
  // What generated code points at (call targets, exit plans).
  CodeData code_data;
  uint64_t next_id = 0;
  size_t last_text_bytes = 0;  // set by the object transform during lookup
  std::string last_object;      // likewise, when keep_text
  bool keep_text = true;

  void optimize(llvm::Module& m) {
    run_passes(m, tm.get(), [this](llvm::PassBuilder& pb) {
      if (opt_level <= 0) return pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0);
      if (opt_level != 2) return pb.buildPerModuleDefaultPipeline(pass_level(opt_level));
      llvm::ModulePassManager mpm;
      mpm.addPass(llvm::createModuleToFunctionPassAdaptor(trace_function_pipeline()));
      return mpm;
    });
  }
};

LlvmTraceCompiler::LlvmTraceCompiler(int level) : opt_level(level), layout(object_layout()) {
  // Registers the host target with LLVM (idempotent, process-wide by LLVM's
  // design).
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  auto jtmb = unwrap(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
  jtmb.setCodeGenOptLevel(codegen_level(opt_level));
  tm = unwrap(jtmb.createTargetMachine(), "creating the target machine");
  jit = unwrap(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create(), "creating LLJIT");

  // Measures the machine code of each object as it passes to the linker.
  LlvmTraceCompiler* impl = this;
  jit->getObjTransformLayer().setTransform(
      [impl](std::unique_ptr<llvm::MemoryBuffer> buf) -> llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> {
        auto obj = llvm::object::ObjectFile::createObjectFile(buf->getMemBufferRef());
        if (obj) {
          size_t text = 0;
          for (const auto& sec : (*obj)->sections())
            if (sec.isText()) text += sec.getSize();
          impl->last_text_bytes = text;
          if (impl->keep_text) impl->last_object.assign(buf->getBufferStart(), buf->getBufferSize());
        } else {
          llvm::consumeError(obj.takeError());  // size is best effort
        }
        return buf;  // unchanged
      });
}

CompiledTrace LlvmTraceCompiler::compile(const TraceIR& ir, const std::string& name, const ExitLinking& linking,
                                   const FunctionProto* proto, const uint8_t* global_watch) {
  // Always (a linear pass: well under 0.1% of an LLVM compile, and LLVM
  // must not see a broken trace); constants may stand anywhere here.
  check_ir(ir, "before LLVM compiles " + name, IRVerifyOptions{.constants_first = false});
  const auto t0 = std::chrono::steady_clock::now();
  LlvmTraceCompiler& im = *this;
  const std::string fn_name = "trace_" + name + "_" + std::to_string(im.next_id++);

  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto mod = std::make_unique<llvm::Module>(fn_name, *ctx);
  mod->setDataLayout(im.jit->getDataLayout());
  mod->setTargetTriple(im.jit->getTargetTriple().str());

  const CodeData::Mark mark = im.code_data.mark();
  try {
    LoweringEnv env = make_lowering_env(ir, im.layout, im.code_data, linking, proto, global_watch);
    lower_trace(ir, env, fn_name, *mod, im.keep_text);
  } catch (const std::exception& e) {
    im.code_data.roll_back(mark);  // nothing refers to them yet
    throw std::runtime_error("llvm backend: trace '" + name + "': " + e.what());
  }

  std::string verify_msg;
  llvm::raw_string_ostream vos(verify_msg);
  if (llvm::verifyModule(*mod, &vos)) {
    im.code_data.roll_back(mark);
    throw std::runtime_error("llvm backend: trace '" + name + "': invalid LLVM IR: " + verify_msg);
  }

  im.optimize(*mod);

  CompiledTrace out;
  if (im.keep_text) {
    llvm::raw_string_ostream os(out.text);
    mod->print(os, nullptr);
  }

  if (llvm::Error e = im.jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx))))
    throw std::runtime_error("llvm backend: trace '" + name + "': " + llvm_error_text(std::move(e)));
  im.last_text_bytes = 0;
  im.last_object.clear();
  // The lookup runs the code generator and links the object.
  auto addr = unwrap(im.jit->lookup(fn_name + "_entry"), "looking up the compiled trace");
  out.fn = addr.toPtr<TraceFn>();
  out.exit_plans = &im.code_data.exit_plans.back();
  out.native = unwrap(im.jit->lookup(fn_name), "looking up the compiled trace").toPtr<const void*>();
  if (takes_passed_values(ir))
    out.native_passed =
        unwrap(im.jit->lookup(fn_name + kPassedEntrySuffix), "looking up the compiled trace").toPtr<const void*>();
  out.code_size = im.last_text_bytes;
  out.object = std::move(im.last_object);
  if (im.keep_text && !out.object.empty()) out.disassembly = disassemble_trace_object(out.object, ir);
  out.code_begin = std::min(reinterpret_cast<const void*>(out.fn), out.native, std::less<>());
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace

std::unique_ptr<HostBackend> make_llvm_trace_compiler(int opt_level) {
  return std::make_unique<LlvmTraceCompiler>(opt_level);
}

}  // namespace tessera::jit
