// A test switch per host tier: with TESSERA_TEST_FAIL_T1=1 (asmjit) or
// TESSERA_TEST_FAIL_T2=1 (LLVM) in the environment, every compile of that
// tier throws, as a backend that cannot compile anything would. It proves
// that the conformance modes which pin a tier fail a program whose hot loop
// got no trace of that tier (tests/conformance/compile_fail_switch_test.py),
// instead of passing on the interpreter's output. Read once, when a backend
// is created; docs/observability.md lists it.
#pragma once

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace tessera::jit {

inline bool test_compile_failure_on(const char* env_var) {
  const char* v = std::getenv(env_var);
  return v && std::strcmp(v, "1") == 0;
}

[[noreturn]] inline void throw_test_compile_failure(const char* env_var, const std::string& trace_name) {
  throw std::runtime_error(std::string(env_var) + "=1: " + trace_name + " is not compiled (a test switch)");
}

}  // namespace tessera::jit
