// DynamicLibrary: a shared library opened with dlopen at run time. The CUDA
// driver and NVRTC are loaded this way so that the binary runs (on the CPU)
// on machines without them; nothing links against them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tessera::device {

class DynamicLibrary {
 public:
  DynamicLibrary() = default;
  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  ~DynamicLibrary();

  // Opens the first of `candidates` that dlopen accepts (RTLD_NOW |
  // RTLD_LOCAL: its symbols stay out of the global namespace). When none
  // does, the result is not open and `error()` has the first candidate's
  // dlerror text (the one a user most likely meant), then the others tried.
  // `global`: RTLD_GLOBAL instead, for a library whose own plugins resolve
  // symbols against it (Open MPI's).
  static DynamicLibrary open_first(const std::vector<std::string>& candidates, bool global = false);

  bool is_open() const { return handle_ != nullptr; }
  // The candidate that was opened ("" when none was).
  const std::string& path() const { return path_; }
  // Why nothing was opened; "" when open.
  const std::string& error() const { return error_; }
  // True when the first candidate failed because the file does not exist
  // (as opposed to existing and not loading: wrong architecture, missing
  // dependencies), so that messages can say "not found".
  bool not_found() const { return not_found_; }

  // dlsym; nullptr when the library is not open or lacks `name`.
  void* symbol(const char* name) const;

  // Keeps the library mapped until the process exits (no dlclose): the CUDA
  // driver registers its own teardown and must not be unloaded under it.
  void keep_loaded() { keep_ = true; }

 private:
  void* handle_ = nullptr;
  bool keep_ = false;
  bool not_found_ = false;
  std::string path_;
  std::string error_;
};

// A library the process can do without (the CUDA driver, NVRTC): loaded at
// run time, then either available or not, with a sentence saying why not.
// Its users derive from it and fill in lib_, available_ and why_.
class OptionalLibrary {
 public:
  OptionalLibrary(const OptionalLibrary&) = delete;
  OptionalLibrary& operator=(const OptionalLibrary&) = delete;

  bool available() const { return available_; }
  // Why the library cannot be used ("" when available).
  const std::string& why_unavailable() const { return why_; }
  // The library file that was opened ("" when none was).
  const std::string& library() const { return lib_.path(); }

 protected:
  OptionalLibrary() = default;
  ~OptionalLibrary() = default;

  // Opens the first of `candidates` into lib_, kept loaded; false, with
  // why_ "NAME not found (dlopen: ...): HINT" (or "could not be loaded"),
  // where none opens. `global`: DynamicLibrary::open_first's.
  bool open_kept(const std::vector<std::string>& candidates, const char* fallback_name, const char* hint,
                 bool global = false);
  // An entry point of an X-macro table: its name and how to store it.
  template <class Api> struct EntryPoint {
    const char* name;
    void (*set)(Api&, void*);
  };
  // Looks each row up in lib_ and stores it in `api`; false, with why_
  // "PATH has no NAME: LACKS", at the first one missing.
  template <class Api, size_t N> bool resolve(const EntryPoint<Api> (&rows)[N], Api& api, const char* lacks) {
    for (const EntryPoint<Api>& row : rows) {
      void* fn = lib_.symbol(row.name);
      if (!fn) {
        why_ = lib_.path() + " has no " + row.name + ": " + lacks;
        return false;
      }
      row.set(api, fn);
    }
    return true;
  }

  DynamicLibrary lib_;
  bool available_ = false;
  std::string why_;
};

}  // namespace tessera::device
