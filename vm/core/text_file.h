// Writing a whole file for an output the user asked for (--dump's files):
// the write is checked to the end (a full disk shows at the flush), and the
// failure comes back as a message rather than vanishing.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tessera {

// Writes `text` to `path` (replacing it). Returns nothing when it was
// written, else "PATH: REASON" (the errno's text where there is one).
std::optional<std::string> write_text_file(const std::string& path, std::string_view text, bool binary = false);

// The first of several writes that failed: what a component that writes
// many files keeps, to report once at the end. Not thread-safe.
class FirstWriteError {
 public:
  // Writes, and keeps the error if it is the first.
  void write(const std::string& path, std::string_view text, bool binary = false) {
    if (auto e = write_text_file(path, text, binary); e && error_.empty()) error_ = *e;
  }
  // Keeps `error` (another kind of write's) if it is the first.
  void note(const std::string& error) {
    if (error_.empty()) error_ = error;
  }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

}  // namespace tessera
