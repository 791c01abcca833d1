// NcclLibrary: NVIDIA's NCCL (libnccl.so.2), loaded with dlopen like the
// CUDA libraries (nothing links it), and only when a collective's tensors
// are on a GPU in a world of several ranks. The entry points are the rows
// of nccl_api.def, with nccl.h's types: this file and its users build only
// where the CUDA toolkit's nccl.h is (runtime/comm/CMakeLists.txt).
//
// The host emulation has no NCCL; a test double of its subset, named by
// $TESSERA_NCCL_LIBRARY, stands in for it there (tests/runtime/comm/
// nccl_double.cpp).
#pragma once

#include <nccl.h>

#include <string>
#include <vector>

#include "runtime/device/dynamic_library.h"

namespace tessera::comm {

class NcclLibrary : public device::OptionalLibrary {
 public:
  // The process's NCCL ($TESSERA_NCCL_LIBRARY, else libnccl.so.2,
  // $CUDA_HOME/lib64/libnccl.so.2, /usr/local/cuda/lib64/libnccl.so.2);
  // loaded on first call, never unloaded.
  static const NcclLibrary& get();
  static std::vector<std::string> default_candidates();
  explicit NcclLibrary(const std::vector<std::string>& candidates);

  struct Api {
#define NCCL_FN(name) decltype(&::name) name = nullptr;
#include "runtime/comm/nccl_api.def"
#undef NCCL_FN
  };
  const Api& api() const { return api_; }

  int version() const { return version_; }  // ncclGetVersion's: 22809 for 2.28.9
  // "NCCL 2.28.9 (libnccl.so.2)".
  std::string describe() const;
  // "ncclInternalError: the library's text (its last error on `comm`)".
  std::string error_text(ncclResult_t r, ncclComm_t comm) const;
  // Throws std::runtime_error "WHAT: TEXT" unless `r` is ncclSuccess.
  void check(ncclResult_t r, const char* what, ncclComm_t comm = nullptr) const;

 private:
  Api api_;
  int version_ = 0;
};

}  // namespace tessera::comm
