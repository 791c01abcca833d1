#include "codegen/host/asmjit/asmjit_backend.h"

#include <asmjit/x86.h>

#include <chrono>
#include <deque>
#include <stdexcept>

#include "codegen/host/asmjit/trace_assembler.h"
#include "codegen/host/code_data.h"
#include "codegen/host/lowering_env.h"
#include "codegen/host/object_layout.h"
#include "codegen/host/test_compile_failure.h"
#include "tracer/ir_verify.h"

namespace tessera::jit {
namespace {

// asmjit reports errors through a handler; the first one is kept and
// turned into an exception once emitting is over.
class FirstError : public asmjit::ErrorHandler {
 public:
  void handleError(asmjit::Error err, const char* message, asmjit::BaseEmitter*) override {
    if (error == asmjit::kErrorOk) {
      error = err;
      text = message;
    }
  }
  asmjit::Error error = asmjit::kErrorOk;
  std::string text;
};

}  // namespace

struct AsmjitBackend::Impl {
  asmjit::JitRuntime runtime;
  ObjectLayout layout = object_layout();
  // What generated code points at (call targets, exit plans).
  CodeData code_data;
  bool keep_text = true;
  // The IR verifier before each compile: when verification is on
  // (TESSERA_VERIFY_IR, builds without NDEBUG), as in the tests. Not by
  // default: it costs T1 about 7% of a small trace's compile, and the
  // optimizer's output is verified after every pass in the tests and CI.
  bool verify = ir_verify_mode() != IRVerifyMode::off;
  const bool fail_for_test = test_compile_failure_on("TESSERA_TEST_FAIL_T1");
};

AsmjitBackend::AsmjitBackend() : impl_(std::make_unique<Impl>()) {}
AsmjitBackend::~AsmjitBackend() = default;

void AsmjitBackend::set_keep_text(bool keep) { impl_->keep_text = keep; }

CompiledTrace AsmjitBackend::compile(const TraceIR& ir, const std::string& name, const ExitLinking& linking,
                                     const FunctionProto* proto, const uint8_t* global_watch) {
  return compile(ir, name, linking, proto, global_watch, nullptr);
}

CompiledTrace AsmjitBackend::compile(const TraceIR& ir, const std::string& name, const ExitLinking& linking,
                                     const FunctionProto* proto, const uint8_t* global_watch,
                                     uint32_t* tier_up_counter) {
  if (impl_->fail_for_test) throw_test_compile_failure("TESSERA_TEST_FAIL_T1", name);
  // Constants may stand anywhere here.
  if (impl_->verify) check_ir(ir, "before asmjit compiles " + name, IRVerifyOptions{.constants_first = false});
  const auto t0 = std::chrono::steady_clock::now();
  Impl& im = *impl_;
  const CodeData::Mark mark = im.code_data.mark();

  asmjit::CodeHolder code;
  code.init(im.runtime.environment());
  FirstError errors;
  code.setErrorHandler(&errors);
  asmjit::StringLogger logger;
  if (im.keep_text) code.setLogger(&logger);
  asmjit::x86::Assembler a(&code);
  asmjit::Label native = a.newLabel(), entry = a.newLabel(), passed = a.newLabel();
  try {
    LoweringEnv env = make_lowering_env(ir, im.layout, im.code_data, linking, proto, global_watch);
    env.tier_up_counter = tier_up_counter;
    t1::assemble_trace(ir, env, a, native, entry, passed);
  } catch (const std::exception& e) {
    im.code_data.roll_back(mark);  // nothing refers to them yet
    throw std::runtime_error("asmjit backend: trace '" + name + "': " + e.what());
  }
  if (errors.error != asmjit::kErrorOk) {
    im.code_data.roll_back(mark);
    throw std::runtime_error("asmjit backend: trace '" + name + "': " + errors.text);
  }
  code.flatten();
  code.resolveUnresolvedLinks();
  void* base = nullptr;
  if (asmjit::Error err = im.runtime.add(&base, &code)) {
    im.code_data.roll_back(mark);
    throw std::runtime_error("asmjit backend: trace '" + name + "': cannot install the code: " +
                             asmjit::DebugUtils::errorAsString(err));
  }
  CompiledTrace out;
  auto* start = static_cast<const char*>(base);
  out.native = start + code.labelOffsetFromBase(native);
  if (takes_passed_values(ir)) out.native_passed = start + code.labelOffsetFromBase(passed);
  out.fn = reinterpret_cast<TraceFn>(const_cast<char*>(start + code.labelOffsetFromBase(entry)));
  out.code_size = code.codeSize();
  out.code_begin = base;
  out.exit_plans = &im.code_data.exit_plans.back();
  if (im.keep_text) out.text = std::string("; trace ") + name + "\n" + logger.data();
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace tessera::jit
