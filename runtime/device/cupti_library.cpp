#include "runtime/device/cupti_library.h"

#include <fmt/format.h>

#include <cstdlib>

#include "runtime/device/cupti_api.h"
#include "runtime/device/device_error.h"

namespace tessera::device {

Cupti::~Cupti() = default;

std::vector<std::string> Cupti::default_candidates() {
  if (const char* env = std::getenv("TESSERA_CUPTI_LIBRARY"); env && *env) return {env};
  std::vector<std::string> c = {"libcupti.so.13"};
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) c.push_back(std::string(home) + "/lib64/libcupti.so.13");
  c.push_back("/usr/local/cuda/lib64/libcupti.so.13");
  c.push_back("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13");
  return c;
}

const Cupti& Cupti::get() {
  static const Cupti* library = new Cupti(default_candidates());
  return *library;
}

Cupti::Cupti(const std::vector<std::string>& candidates) {
  lib_ = DynamicLibrary::open_first(candidates);
  if (!lib_.is_open()) {
    why_ = fmt::format("{} {} (dlopen: {}): install the CUDA toolkit's CUPTI or set TESSERA_CUPTI_LIBRARY",
                       candidates.empty() ? "libcupti.so" : candidates.front(),
                       lib_.not_found() ? "not found" : "could not be loaded", lib_.error());
    return;
  }
  lib_.keep_loaded();
  auto api = std::make_unique<Api>();
  struct Row {
    const char* name;
    bool needed;
    void (*set)(Api&, void*);
  };
  static constexpr Row kRows[] = {
#define CUPTI_FN(name) {#name, true, [](Api& a, void* fn) { a.name = reinterpret_cast<decltype(a.name)>(fn); }},
#define CUPTI_FN_OPT(name) {#name, false, [](Api& a, void* fn) { a.name = reinterpret_cast<decltype(a.name)>(fn); }},
#include "runtime/device/cupti_api.def"
#undef CUPTI_FN_OPT
#undef CUPTI_FN
  };
  for (const Row& row : kRows) {
    void* fn = lib_.symbol(row.name);
    if (!fn && row.needed) {
      why_ = fmt::format("{} has no {}: it is not CUPTI or is too old", lib_.path(), row.name);
      return;
    }
    if (!fn && why_no_metrics_.empty())
      why_no_metrics_ = fmt::format("{} has no {} (the Range Profiler and the Profiler Host API came with CUDA 12.6)",
                                    lib_.path(), row.name);
    if (fn) row.set(*api, fn);
  }
  hook_ = reinterpret_cast<EmulatedKernelHook>(lib_.symbol("tesseraEmulatedKernelRan"));
  if (api->cuptiGetVersion(&version_) != CUPTI_SUCCESS) {
    why_ = lib_.path() + ": cuptiGetVersion failed";
    return;
  }
  api_ = std::move(api);
  available_ = true;
}

std::string Cupti::describe() const {
  return fmt::format("CUPTI {}.{} (API {}, {})", version_ / 10000, version_ / 100 % 100, version_, library());
}

std::string Cupti::error_text(int result) const {
  const char* text = nullptr;
  if (api_ && api_->cuptiGetResultString(static_cast<CUptiResult>(result), &text) == CUPTI_SUCCESS && text) return text;
  return fmt::format("CUptiResult {}", result);
}

void Cupti::check(int result, const char* what) const {
  if (result != CUPTI_SUCCESS) throw DeviceError(fmt::format("{}: {}", what, error_text(result)));
}

}  // namespace tessera::device
