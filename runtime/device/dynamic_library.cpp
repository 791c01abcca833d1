#include "runtime/device/dynamic_library.h"

#include <dlfcn.h>

#include <utility>

namespace tessera::device {

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept { *this = std::move(other); }

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ && !keep_) dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    keep_ = other.keep_;
    not_found_ = other.not_found_;
    path_ = std::move(other.path_);
    error_ = std::move(other.error_);
  }
  return *this;
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_ && !keep_) dlclose(handle_);
}

DynamicLibrary DynamicLibrary::open_first(const std::vector<std::string>& candidates, bool global) {
  DynamicLibrary lib;
  std::string others;
  for (size_t i = 0; i < candidates.size(); ++i) {
    void* handle = dlopen(candidates[i].c_str(), RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
    if (handle) {
      lib.handle_ = handle;
      lib.path_ = candidates[i];
      lib.error_.clear();
      lib.not_found_ = false;
      return lib;
    }
    const char* err = dlerror();
    const std::string text = err ? err : "unknown dlopen error";
    if (i == 0) {
      lib.error_ = text;
      lib.not_found_ = text.find("No such file") != std::string::npos;
    } else {
      others += (others.empty() ? "" : ", ") + candidates[i];
    }
  }
  if (candidates.empty()) lib.error_ = "no library name to try";
  if (!others.empty()) lib.error_ += "; also tried " + others;
  return lib;
}

bool OptionalLibrary::open_kept(const std::vector<std::string>& candidates, const char* fallback_name, const char* hint,
                                bool global) {
  lib_ = DynamicLibrary::open_first(candidates, global);
  if (!lib_.is_open()) {
    why_ = (candidates.empty() ? std::string(fallback_name) : candidates.front()) + " " +
           (lib_.not_found() ? "not found" : "could not be loaded") + " (dlopen: " + lib_.error() + "): " + hint;
    return false;
  }
  lib_.keep_loaded();
  return true;
}

void* DynamicLibrary::symbol(const char* name) const { return handle_ ? dlsym(handle_, name) : nullptr; }

}  // namespace tessera::device
