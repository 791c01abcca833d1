#include "vm/tensor/blas_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "vm/core/error.h"

namespace tessera {

namespace {

struct Loaded {
  BlasSgemm sgemm = nullptr;
  std::string why;  // when sgemm is null
};

Loaded load() {
  std::vector<std::string> names;
  if (const char* env = std::getenv("TESSERA_OPENBLAS_LIBRARY"); env && *env) {
    names.emplace_back(env);  // the user's choice alone
  } else {
    names.emplace_back("libopenblas.so.0");
#ifdef TESSERA_OPENBLAS_PATH
    names.emplace_back(TESSERA_OPENBLAS_PATH);
#endif
  }
  Loaded out;
  for (const std::string& name : names) {
    // Never closed: the library's threads live as long as the process.
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      out.why += (out.why.empty() ? "" : "; ") + (e ? std::string(e) : name + ": not loaded");
      continue;
    }
    if (void* f = dlsym(lib, "cblas_sgemm")) {
      out.sgemm = reinterpret_cast<BlasSgemm>(f);
      return out;
    }
    out.why += (out.why.empty() ? "" : "; ") + name + " has no cblas_sgemm";
  }
  return out;
}

}  // namespace

BlasSgemm blas_sgemm() {
  static const Loaded loaded = load();
  if (!loaded.sgemm)
    throw RuntimeError("matmul: OpenBLAS could not be loaded (" + loaded.why +
                       "); install libopenblas0 or set TESSERA_OPENBLAS_LIBRARY to its libopenblas.so");
  return loaded.sgemm;
}

}  // namespace tessera
