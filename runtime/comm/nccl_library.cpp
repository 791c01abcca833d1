#include "runtime/comm/nccl_library.h"

#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>

namespace tessera::comm {

std::vector<std::string> NcclLibrary::default_candidates() {
  if (const char* env = std::getenv("TESSERA_NCCL_LIBRARY"); env && *env) return {env};
  std::vector<std::string> c = {"libnccl.so.2"};
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) c.push_back(std::string(home) + "/lib64/libnccl.so.2");
  c.push_back("/usr/local/cuda/lib64/libnccl.so.2");
  return c;
}

const NcclLibrary& NcclLibrary::get() {
  static const NcclLibrary* library = new NcclLibrary(default_candidates());
  return *library;
}

NcclLibrary::NcclLibrary(const std::vector<std::string>& candidates) {
  if (!open_kept(candidates, "libnccl.so.2",
                 "install NCCL (the CUDA toolkit's, or libnccl2) or set TESSERA_NCCL_LIBRARY"))
    return;
  static constexpr EntryPoint<Api> kRows[] = {
#define NCCL_FN(name) {#name, [](Api& a, void* fn) { a.name = reinterpret_cast<decltype(a.name)>(fn); }},
#include "runtime/comm/nccl_api.def"
#undef NCCL_FN
  };
  if (!resolve(kRows, api_, "it is not NCCL 2.7 or later")) return;
  if (api_.ncclGetVersion(&version_) != ncclSuccess) {
    why_ = lib_.path() + ": ncclGetVersion failed";
    return;
  }
  available_ = true;
}

std::string NcclLibrary::describe() const {
  // NCCL_VERSION(X, Y, Z) is X * 10000 + Y * 100 + Z since 2.9 (X * 1000 + Y * 100 + Z before).
  const int major = version_ >= 10000 ? version_ / 10000 : version_ / 1000;
  const int minor = version_ >= 10000 ? version_ / 100 % 100 : version_ / 100 % 10;
  return fmt::format("NCCL {}.{}.{} ({})", major, minor, version_ % 100, library());
}

std::string NcclLibrary::error_text(ncclResult_t r, ncclComm_t comm) const {
  std::string text = available_ ? api_.ncclGetErrorString(r) : fmt::format("ncclResult_t {}", static_cast<int>(r));
  if (available_) {
    const char* last = api_.ncclGetLastError(comm);
    if (last && *last) text += fmt::format(" ({})", last);
  }
  return text;
}

void NcclLibrary::check(ncclResult_t r, const char* what, ncclComm_t comm) const {
  if (r != ncclSuccess) throw std::runtime_error(fmt::format("{}: {}", what, error_text(r, comm)));
}

}  // namespace tessera::comm
