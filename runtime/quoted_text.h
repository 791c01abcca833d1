// A text in double quotes with `"` and `\` escaped and newlines as `\n`:
// how the event log (jit_event_log.h) quotes a field and how the trace tree
// (trace_graph.h) writes a Graphviz string, which read it back the same way.
#pragma once

#include <string>
#include <string_view>

namespace tessera::jit {

inline std::string quoted_text(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace tessera::jit
