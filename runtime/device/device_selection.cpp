#include "runtime/device/device_selection.h"

#include <fmt/format.h>

#include <cstdlib>

#include <algorithm>

#include "runtime/device/cuda_driver.h"
#include "runtime/device/nvrtc_library.h"
#ifndef TESSERA_NO_CUDA_HEADERS
#include "runtime/device/gpu_device.h"
#endif

namespace tessera::device {

namespace {

struct ChoiceInfo {
  DeviceChoice choice;
  std::string_view name;
  std::string_view help;
};
constexpr ChoiceInfo kChoices[] = {
#define DEVICE_CHOICE(e, name, help) {DeviceChoice::e, name, help},
#include "runtime/device/device_choices.def"
#undef DEVICE_CHOICE
};

#ifndef TESSERA_NO_CUDA_HEADERS
std::string arch_list(const std::vector<int>& archs) {
  std::string out;
  for (int a : archs) out += fmt::format("{}sm_{}", out.empty() ? "" : " ", a);
  return out;
}
#endif

// Fills `sel` with GPU 0 when it can run Tessera's kernels; else returns why
// not (and `sel` is to be discarded).
std::string probe_gpu(const DeviceLibraries& libraries, DeviceSelection& sel) {
  const CudaDriver& driver = libraries.driver();
  if (!driver.available()) return driver.why_unavailable();
#ifdef TESSERA_NO_CUDA_HEADERS
  (void)sel;
  return "built without the CUDA headers";
#else
  try {
    int count = 0;
    driver.check(driver.cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (count == 0) return "the NVIDIA driver sees no CUDA device (check CUDA_VISIBLE_DEVICES)";
    // Under mpirun, one GPU per rank: the rank's local rank (its place
    // among the ranks of its machine) chooses, round robin.
    int ordinal = 0;
    if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK"); local && *local)
      ordinal = static_cast<int>(std::max(0L, std::strtol(local, nullptr, 10)) % count);
    CUdevice dev = 0;
    driver.check(driver.cuDeviceGet(&dev, ordinal), fmt::format("cuDeviceGet({})", ordinal).c_str());
    sel.ordinal = ordinal;
    char name[256] = {};
    driver.check(driver.cuDeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
    driver.check(driver.cuDeviceGetAttribute(&sel.sm_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
                 "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
    driver.check(driver.cuDeviceGetAttribute(&sel.sm_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
                 "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
    size_t bytes = 0;
    driver.check(driver.cuDeviceTotalMem(&bytes, dev), "cuDeviceTotalMem");
    sel.name = name;
    sel.memory_bytes = bytes;
    sel.arch = gpu_arch(sel.sm_major, sel.sm_minor);
    sel.driver_version = driver.version();

    const NvrtcLibrary& nvrtc = libraries.nvrtc();
    if (!nvrtc.available()) return "the GPU's kernels cannot be compiled: " + nvrtc.why_unavailable();
    sel.nvrtc_version = nvrtc.version();
    const std::vector<int>& archs = nvrtc.supported_archs();
    const int cc = 10 * sel.sm_major + sel.sm_minor;
    if (!archs.empty() && std::find(archs.begin(), archs.end(), cc) == archs.end()) {
      return fmt::format("{} is sm_{}, which NVRTC {}.{} cannot compile for (it supports {})", sel.name, cc,
                         sel.nvrtc_version.first, sel.nvrtc_version.second, arch_list(archs));
    }
    sel.gpu_device = std::make_shared<GpuDevice>(driver, dev);
  } catch (const DeviceError& e) {
    return e.what();
  }
  return {};
#endif
}

}  // namespace

std::optional<DeviceChoice> parse_device_choice(std::string_view text) {
  for (const ChoiceInfo& c : kChoices) {
    if (c.name == text) return c.choice;
  }
  return std::nullopt;
}

std::string_view device_choice_name(DeviceChoice choice) {
  for (const ChoiceInfo& c : kChoices) {
    if (c.choice == choice) return c.name;
  }
  return "?";
}

std::vector<std::string> device_choice_names() {
  std::vector<std::string> names;
  for (const ChoiceInfo& c : kChoices) names.emplace_back(c.name);
  return names;
}

std::string describe_device_choices() {
  std::string out;
  for (const ChoiceInfo& c : kChoices) out += fmt::format("{}  {:<5} {}", out.empty() ? "" : "\n", c.name, c.help);
  return out;
}

std::string gpu_arch(int major, int minor) {
  return fmt::format("sm_{}{}{}", major, minor, major == 9 && minor == 0 ? "a" : "");
}

std::string DeviceSelection::describe() const {
  if (!gpu) return fmt::format("cpu ({}{})", choice == DeviceChoice::Auto ? "auto: " : "", reason);
  if (emulated) return fmt::format("host emulation of a GPU (TESSERA_GPU_EMULATION=1, for testing; no GPU: {})", reason);
  return fmt::format("{}{} ({}, {:.1f} GiB), CUDA driver {}, NVRTC {}.{}", ordinal ? fmt::format("GPU {}: ", ordinal) : "", name, arch,
                     static_cast<double>(memory_bytes) / (1024.0 * 1024.0 * 1024.0), cuda_version_text(driver_version),
                     nvrtc_version.first, nvrtc_version.second);
}

DeviceLibraries DeviceLibraries::process() {
  return {[]() -> const CudaDriver& { return CudaDriver::get(); },
          []() -> const NvrtcLibrary& { return NvrtcLibrary::get(); }};
}

DeviceSelection select_device(DeviceChoice choice) { return select_device(choice, DeviceLibraries::process()); }

DeviceSelection select_device(DeviceChoice choice, const DeviceLibraries& libraries) {
  DeviceSelection cpu;
  cpu.choice = choice;
  if (choice == DeviceChoice::Cpu) {
    cpu.reason = "--device=cpu";
    return cpu;
  }
  DeviceSelection gpu;
  gpu.choice = choice;
  std::string why = probe_gpu(libraries, gpu);
  if (why.empty()) {
    gpu.gpu = true;
    return gpu;
  }
  if (choice == DeviceChoice::Gpu) {
    const char* emulation = std::getenv("TESSERA_GPU_EMULATION");
    if (!emulation || std::string(emulation) != "1") throw DeviceError("--device=gpu: no usable GPU: " + why);
    DeviceSelection emulated;
    emulated.choice = choice;
    emulated.gpu = emulated.emulated = true;
    emulated.name = "host emulation";
    emulated.reason = std::move(why);
    return emulated;
  }
  cpu.reason = std::move(why);
  return cpu;
}

}  // namespace tessera::device
