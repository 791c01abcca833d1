// llvm_library() for tessera-vm: libtessera-llvm.so, loaded by the first
// call (llvm_library.h says why). Where it is looked for, in order:
//   $TESSERA_LLVM_LIBRARY (the user's choice alone, when set);
//   the executable's directory (the build tree);
//   ../lib/tessera beside the executable's directory (an installed layout,
//     tools/device-bundle.sh's bundle);
//   the build tree the executable came from (a copy of tessera-vm made
//     elsewhere still finds its library).
#include "codegen/llvm_library/llvm_library.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace tessera::jit {

namespace {

constexpr const char* kFileName = "libtessera-llvm.so";

std::vector<std::string> candidates() {
  if (const char* env = std::getenv("TESSERA_LLVM_LIBRARY"); env && *env) return {env};
  std::vector<std::string> out;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    out.push_back((exe.parent_path() / kFileName).string());
    out.push_back((exe.parent_path().parent_path() / "lib" / "tessera" / kFileName).string());
  }
#ifdef TESSERA_LLVM_LIBRARY_BUILD_PATH
  if (std::find(out.begin(), out.end(), TESSERA_LLVM_LIBRARY_BUILD_PATH) == out.end())
    out.emplace_back(TESSERA_LLVM_LIBRARY_BUILD_PATH);
#endif
  return out;
}

struct Loaded {
  const LlvmLibrary* table = nullptr;
  std::string why;  // when table is null
};

Loaded load() {
  Loaded out;
  for (const std::string& path : candidates()) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      out.why += (out.why.empty() ? "" : "; ") + path + ": no such file";
      continue;
    }
    // RTLD_NOW: a symbol missing from the executable is an error here, not
    // a crash in the middle of a compile. Never closed: compiled code lives
    // as long as the process.
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      out.why += (out.why.empty() ? "" : "; ") + (e ? std::string(e) : path + ": not loaded");
      continue;
    }
    using Entry = const LlvmLibrary* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(lib, "tessera_llvm_library"));
    const LlvmLibrary* table = entry ? entry() : nullptr;
    if (!table || table->abi_version != LlvmLibrary::kAbiVersion) {
      out.why += (out.why.empty() ? "" : "; ") + path + ": not this build's LLVM library";
      continue;
    }
    out.table = table;
    return out;
  }
  return out;
}

std::string failure(const Loaded& loaded) {
  return "the LLVM library (T2 and the CPU kernel compiler) could not be loaded (" + loaded.why +
         "); set TESSERA_LLVM_LIBRARY to the path of the " + std::string(kFileName) + " built with this tessera-vm";
}

const Loaded& loaded_once() {
  static const Loaded loaded = [] {
    Loaded l = load();
    // Said once: the program goes on without T2 (its traces stay in T1) and
    // with the interpreter's tensor kernels, which a user must know of to
    // read its times.
    if (!l.table) std::cerr << "tessera-vm: warning: " << failure(l) << "; running without them\n";
    return l;
  }();
  return loaded;
}

}  // namespace

const LlvmLibrary& llvm_library() {
  const Loaded& loaded = loaded_once();
  if (!loaded.table) throw std::runtime_error(failure(loaded));
  return *loaded.table;
}

}  // namespace tessera::jit
