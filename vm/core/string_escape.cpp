#include "vm/core/string_escape.h"

namespace tessera {

void append_quoted(std::string& out, std::string_view s, char quote) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += quote;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\\': out += "\\\\"; break;
      case '\0': out += "\\0"; break;
      default:
        if (c == static_cast<unsigned char>(quote)) {
          out += '\\';
          out += ch;
        } else if (c < 0x20 || c == 0x7f) {
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  out += quote;
}

}  // namespace tessera
