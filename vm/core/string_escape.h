// Quoting strings for display: printed lists, error messages, disassembly.
#pragma once

#include <string>
#include <string_view>

namespace tessera {

// Appends `s` between `quote` characters, escaping \n \t \r \\ \0, the
// quote itself, and other control bytes as \xNN; bytes >= 0x80 (UTF-8) are
// kept as they are.
void append_quoted(std::string& out, std::string_view s, char quote = '"');

}  // namespace tessera
