#include "runtime/dump_directory.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace tessera {

std::string plain_file_error(int err) {
  switch (err) {
    case EACCES:
    case EPERM: return "no permission";
    case EROFS: return "the file system is read-only";
    case ENOSPC: return "the disk is full";
    case EDQUOT: return "the disk quota is used up";
    case ENAMETOOLONG: return "the path is too long";
    case ENOENT: return "the system does not let a directory be made there";
    default: return err ? std::strerror(err) : "the system refused";
  }
}

std::optional<std::string> dump_directory_problem(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    return std::string("that is a file, not a directory (give a directory: it is made if missing)");
  std::error_code made;
  fs::create_directories(dir, made);
  if (!fs::is_directory(dir, ec)) {
    // The deepest part of the path that exists says what stopped it.
    fs::path have = fs::absolute(fs::path(dir), ec).parent_path();
    while (!have.empty() && !fs::exists(have, ec) && have != have.root_path()) have = have.parent_path();
    if (!have.empty() && fs::exists(have, ec) && !fs::is_directory(have, ec))
      return "cannot make this directory: " + have.string() + " is a file, not a directory";
    if (!have.empty() && ::access(have.c_str(), W_OK) != 0)
      return "cannot make this directory: no permission to make a directory in " + have.string();
    return "cannot make this directory: " + plain_file_error(made.value());
  }
  const std::string probe = (fs::path(dir) / ".tessera-vm-write-test").string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot write files in this directory: " + plain_file_error(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return std::nullopt;
}

}  // namespace tessera
