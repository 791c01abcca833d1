#include "vm/core/text_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace tessera {

std::optional<std::string> write_text_file(const std::string& path, std::string_view text, bool binary) {
  errno = 0;
  std::ofstream f(path, binary ? std::ios::out | std::ios::trunc | std::ios::binary : std::ios::out | std::ios::trunc);
  if (f && f.write(text.data(), static_cast<std::streamsize>(text.size())) && f.flush()) return std::nullopt;
  return path + ": " + (errno ? std::strerror(errno) : "the write failed");
}

}  // namespace tessera
