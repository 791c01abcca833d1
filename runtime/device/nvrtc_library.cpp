#include "runtime/device/nvrtc_library.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#ifndef TESSERA_NO_CUDA_HEADERS
#include <nvrtc.h>
#endif

namespace tessera::device {

#ifndef TESSERA_NO_CUDA_HEADERS
struct NvrtcLibrary::Api {
#define NVRTC_FN(name) decltype(&::name) name = nullptr;
#include "runtime/device/nvrtc_api.def"
#undef NVRTC_FN
};
#else
struct NvrtcLibrary::Api {};
#endif

NvrtcLibrary::~NvrtcLibrary() = default;

std::vector<std::string> NvrtcLibrary::default_candidates() {
  if (const char* env = std::getenv("TESSERA_NVRTC_LIBRARY"); env && *env) return {env};
  std::vector<std::string> candidates = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  auto add = [&](const std::string& path) {
    if (std::find(candidates.begin(), candidates.end(), path) == candidates.end()) candidates.push_back(path);
  };
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) add(std::string(home) + "/lib64/libnvrtc.so.13");
  add("/usr/local/cuda/lib64/libnvrtc.so.13");
  return candidates;
}

const NvrtcLibrary& NvrtcLibrary::get() {
  // Never destroyed (as CudaDriver::get()); the static pointer keeps it
  // reachable for LeakSanitizer.
  static const NvrtcLibrary* library = new NvrtcLibrary(default_candidates());
  return *library;
}

#ifdef TESSERA_NO_CUDA_HEADERS

NvrtcLibrary::NvrtcLibrary(const std::vector<std::string>&) {
  why_ =
      "Tessera VM was built without the CUDA headers (nvrtc.h not found when it was configured): "
      "install the CUDA toolkit and rebuild to compile GPU kernels";
}

NvrtcOutput NvrtcLibrary::compile(const std::string&, const std::string&, const std::vector<NvrtcHeader>&,
                                  const std::vector<std::string>&) const {
  throw DeviceError("NVRTC is not available: " + why_);
}

#else

NvrtcLibrary::NvrtcLibrary(const std::vector<std::string>& candidates) {
  lib_ = DynamicLibrary::open_first(candidates);
  if (!lib_.is_open()) {
    const std::string wanted = candidates.empty() ? "libnvrtc.so" : candidates.front();
    why_ = fmt::format("{} {} (dlopen: {}): install the CUDA toolkit's NVRTC or set TESSERA_NVRTC_LIBRARY to its "
                       "libnvrtc.so",
                       wanted, lib_.not_found() ? "not found" : "could not be loaded", lib_.error());
    return;
  }
  struct Row {
    const char* name;
    void (*set)(Api&, void*);
  };
  static constexpr Row kRows[] = {
#define NVRTC_FN(name) {#name, [](Api& api, void* fn) { api.name = reinterpret_cast<decltype(api.name)>(fn); }},
#include "runtime/device/nvrtc_api.def"
#undef NVRTC_FN
  };
  auto api = std::make_unique<Api>();
  for (const Row& row : kRows) {
    void* fn = lib_.symbol(row.name);
    if (!fn) {
      why_ = fmt::format("{} has no {}: it is not NVRTC or is older than CUDA 11.2", lib_.path(), row.name);
      return;
    }
    row.set(*api, fn);
  }
  if (api->nvrtcVersion(&version_.first, &version_.second) != NVRTC_SUCCESS) {
    why_ = fmt::format("{}: nvrtcVersion failed", lib_.path());
    return;
  }
  int count = 0;
  if (api->nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
    archs_.resize(static_cast<size_t>(count));
    if (api->nvrtcGetSupportedArchs(archs_.data()) != NVRTC_SUCCESS) archs_.clear();
  }
  api_ = std::move(api);
  available_ = true;
}

namespace {

// Reads one of the program's outputs (log, cubin, PTX) through its size and
// copy functions; text outputs end in a NUL, which is dropped.
template <class SizeFn, class GetFn>
std::string read_output(nvrtcProgram program, SizeFn size_fn, GetFn get_fn, bool text) {
  size_t size = 0;
  if (size_fn(program, &size) != NVRTC_SUCCESS || size == 0) return {};
  std::string out(size, '\0');
  if (get_fn(program, out.data()) != NVRTC_SUCCESS) return {};
  if (text && !out.empty() && out.back() == '\0') out.pop_back();
  return out;
}

}  // namespace

NvrtcOutput NvrtcLibrary::compile(const std::string& source, const std::string& name,
                                  const std::vector<NvrtcHeader>& headers,
                                  const std::vector<std::string>& options) const {
  if (!available_) throw DeviceError("NVRTC is not available: " + why_);
  const auto start = std::chrono::steady_clock::now();
  std::vector<const char*> header_sources, header_names, option_ptrs;
  for (const NvrtcHeader& h : headers) {
    header_sources.push_back(h.source.c_str());
    header_names.push_back(h.name.c_str());
  }
  for (const std::string& o : options) option_ptrs.push_back(o.c_str());

  nvrtcProgram program = nullptr;
  nvrtcResult r = api_->nvrtcCreateProgram(&program, source.c_str(), name.c_str(), static_cast<int>(headers.size()),
                                           header_sources.data(), header_names.data());
  if (r != NVRTC_SUCCESS) {
    throw DeviceError(fmt::format("nvrtcCreateProgram({}): {}", name, api_->nvrtcGetErrorString(r)));
  }
  struct Destroy {
    const Api& api;
    nvrtcProgram* program;
    ~Destroy() { api.nvrtcDestroyProgram(program); }
  } destroy{*api_, &program};

  r = api_->nvrtcCompileProgram(program, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  NvrtcOutput out;
  out.log = read_output(program, api_->nvrtcGetProgramLogSize, api_->nvrtcGetProgramLog, true);
  if (r == NVRTC_SUCCESS) {
    out.ok = true;
    out.cubin = read_output(program, api_->nvrtcGetCUBINSize, api_->nvrtcGetCUBIN, false);
    if (out.cubin.empty()) out.ptx = read_output(program, api_->nvrtcGetPTXSize, api_->nvrtcGetPTX, true);
  } else if (r == NVRTC_ERROR_COMPILATION || r == NVRTC_ERROR_INVALID_OPTION) {
    // The program's fault or the options': the caller reports the log. A
    // rejected option leaves the log empty, so say which error it was.
    if (r == NVRTC_ERROR_INVALID_OPTION) {
      out.log = fmt::format("{}: {} (options: {})\n{}", name, api_->nvrtcGetErrorString(r),
                            fmt::join(options, " "), out.log);
    }
  } else {
    throw DeviceError(fmt::format("nvrtcCompileProgram({}): {}", name, api_->nvrtcGetErrorString(r)));
  }
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

#endif  // TESSERA_NO_CUDA_HEADERS

}  // namespace tessera::device
