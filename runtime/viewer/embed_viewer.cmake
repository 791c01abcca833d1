# Writes OUT, a C++ source defining trace_viewer_page() (runtime/trace_viewer.h)
# as the text of PAGE (runtime/viewer/trace_viewer.html), so that the binary
# writes the page without reading files beside it.
file(READ "${PAGE}" page)
string(FIND "${page}" ")tsr_page\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${PAGE} holds the raw string's delimiter")
endif()
file(WRITE "${OUT}.tmp" "// Generated from runtime/viewer/trace_viewer.html by embed_viewer.cmake.
#include \"runtime/trace_viewer.h\"

namespace tessera {

const std::string& trace_viewer_page() {
  static const std::string text = R\"tsr_page(${page})tsr_page\";
  return text;
}

}  // namespace tessera
")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
