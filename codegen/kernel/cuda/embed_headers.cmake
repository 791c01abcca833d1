# Writes OUT, a C++ source defining cuda_wrapper_header() and
# cuda_host_prelude() (cuda_emitter.h) as the texts of WRAPPER and PRELUDE,
# so that the binary hands NVRTC the same header the tests compile against.
file(READ "${WRAPPER}" wrapper)
file(READ "${PRELUDE}" prelude)
foreach(text wrapper prelude)
  string(FIND "${${text}}" ")tsr_header\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${text} holds the raw string's delimiter")
  endif()
endforeach()
file(WRITE "${OUT}.tmp" "// Generated from codegen/kernel/cuda/tessera_cuda*.h by embed_headers.cmake.
#include \"codegen/kernel/cuda/cuda_emitter.h\"

namespace tessera::kir {

const std::string& cuda_wrapper_header() {
  static const std::string text = R\"tsr_header(${wrapper})tsr_header\";
  return text;
}

const std::string& cuda_host_prelude() {
  static const std::string text = R\"tsr_header(${prelude})tsr_header\";
  return text;
}

}  // namespace tessera::kir
")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
