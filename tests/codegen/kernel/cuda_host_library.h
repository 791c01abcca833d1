// CUDA C++ sources (generated, or written by a test) compiled by the host's
// C++ compiler against the emulation prelude (tessera_cuda_host.h: a
// block's threads as fibers) into one shared library and loaded: the CUDA
// tests that run kernels without a GPU share it. The including target
// defines TESSERA_HOST_CXX and TESSERA_BOOST_CONTEXT (tests/codegen/CMakeLists.txt).
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/kernel/cuda/cuda_emitter.h"

namespace tessera::kir::testing {

// The host entry of a kernel: `entry`_host(args, programs, threads, shared bytes).
using HostEntry = void (*)(void* const*, long long, int, long long);

struct HostLibrary {
  void* handle = nullptr;  // nullptr when the build failed: `error` says why
  std::string error;
  HostLibrary() = default;
  HostLibrary(const HostLibrary&) = delete;
  HostLibrary& operator=(const HostLibrary&) = delete;
  ~HostLibrary() {
    if (handle) dlclose(handle);
  }
};

// Writes the sources and both headers to a fresh directory, compiles them
// (with `flags`, e.g. "-w" or "-Wall -Wextra -Werror") into one shared
// library and loads it. TESSERA_KEEP_CUDA_SOURCES=1 keeps the directory.
inline std::unique_ptr<HostLibrary> build_host_library(const std::vector<std::string>& sources,
                                                       const std::string& flags = "-w") {
  auto lib = std::make_unique<HostLibrary>();
  namespace fs = std::filesystem;
  static int builds = 0;  // a fresh path each time: dlopen hands back a library already loaded from one
  const fs::path dir =
      fs::temp_directory_path() / ("tessera-cuda-emu-" + std::to_string(::getpid()) + "-" + std::to_string(builds++));
  fs::create_directories(dir);
  std::ofstream(dir / "tessera_cuda.h") << cuda_wrapper_header();
  std::ofstream(dir / "tessera_cuda_host.h") << cuda_host_prelude();
  {
    std::ofstream all(dir / "kernels.cpp");
    for (const std::string& s : sources) all << s << "\n";
  }
  const std::string so = (dir / "kernels.so").string(), log = (dir / "compile.log").string();
  const std::string cmd = std::string(TESSERA_HOST_CXX) + " -std=c++17 -O1 " + flags +
                          " -fPIC -shared -DTSR_HOST_EMULATION -I" + dir.string() + " " +
                          (dir / "kernels.cpp").string() + " -o " + so + " " + TESSERA_BOOST_CONTEXT + " > " + log +
                          " 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream in(log);
    lib->error = "host compile failed: " + cmd + "\n" + std::string(std::istreambuf_iterator<char>(in), {});
    return lib;
  }
  lib->handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle) lib->error = std::string("dlopen: ") + dlerror();
  if (std::getenv("TESSERA_KEEP_CUDA_SOURCES")) std::fprintf(stderr, "sources kept in %s\n", dir.c_str());
  else fs::remove_all(dir);
  return lib;
}

// The symbol `name` of a library build_host_library made; throws
// std::runtime_error where the build failed or the symbol is missing.
inline void* host_symbol(const HostLibrary& lib, const std::string& name) {
  if (!lib.handle) throw std::runtime_error(lib.error);
  void* fn = dlsym(lib.handle, name.c_str());
  if (!fn) throw std::runtime_error("no symbol " + name + " in the emulation's library");
  return fn;
}

// The host entry of `kernel` (its extern "C" `kernel`_host).
inline HostEntry host_entry(const HostLibrary& lib, const std::string& kernel) {
  return reinterpret_cast<HostEntry>(host_symbol(lib, kernel + "_host"));
}

}  // namespace tessera::kir::testing
