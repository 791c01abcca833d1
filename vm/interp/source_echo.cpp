#include "vm/interp/source_echo.h"

#include <algorithm>
#include <cstddef>

namespace tessera {

namespace {

// Columns echoed on each side of the caret in a long line.
constexpr size_t kEchoWindow = 80;

}  // namespace

std::string_view source_line(std::string_view source, int line) {
  if (line < 1) return {};
  size_t pos = 0;
  for (int l = 1; l < line; ++l) {
    pos = source.find('\n', pos);
    if (pos == std::string_view::npos) return {};
    ++pos;
  }
  size_t end = source.find('\n', pos);
  std::string_view s = source.substr(pos, end == std::string_view::npos ? end : end - pos);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

std::string caret_echo(std::string_view text, int col, std::string_view indent) {
  if (text.empty() || col < 1 || static_cast<size_t>(col) > text.size() + 1) return {};
  const size_t caret = static_cast<size_t>(col - 1);
  size_t from = 0, to = text.size();
  if (text.size() > 2 * kEchoWindow) {
    from = caret > kEchoWindow ? caret - kEchoWindow : 0;
    to = std::min(text.size(), caret + kEchoWindow);
  }
  const char* lead = from > 0 ? "..." : "";
  std::string out;
  out.append(indent).append(lead).append(text.substr(from, to - from)).append(to < text.size() ? "..." : "");
  out.append("\n").append(indent).append(lead);
  for (size_t i = from; i < caret; ++i) out += text[i] == '\t' ? '\t' : ' ';
  out += "^\n";
  return out;
}

}  // namespace tessera
