// Device selection: which device runs the tensor kernels (--device=auto|cpu|
// gpu). Auto takes the GPU when everything it needs is there (the driver, a
// device, NVRTC) and the CPU otherwise, saying why; gpu makes a missing piece
// an error; cpu never touches the driver. This header has no CUDA types, so
// the runtime and the CLI include it on machines without the toolkit too.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::device {

class CudaDriver;
class NvrtcLibrary;
class GpuDevice;

enum class DeviceChoice {
#define DEVICE_CHOICE(e, name, help) e,
#include "runtime/device/device_choices.def"
#undef DEVICE_CHOICE
};

// "auto" -> Auto, ...; nullopt for anything else.
std::optional<DeviceChoice> parse_device_choice(std::string_view text);
std::string_view device_choice_name(DeviceChoice choice);
// Every choice's name, in table order (the CLI's allowed values).
std::vector<std::string> device_choice_names();
// One "  NAME  what it means" line per choice, for --help (no final newline).
std::string describe_device_choices();

struct DeviceSelection {
  DeviceChoice choice = DeviceChoice::Auto;
  bool gpu = false;
  std::string name = "cpu";  // "cpu", or the GPU's name ("NVIDIA H100 80GB HBM3")
  int sm_major = 0, sm_minor = 0;  // compute capability (GPU only)
  std::string arch;                // NVRTC's target, e.g. "sm_90a" (GPU only)
  // Which GPU (cuDeviceGet's ordinal): 0, or under mpirun the rank's
  // OMPI_COMM_WORLD_LOCAL_RANK modulo the GPUs it sees (one GPU per rank).
  int ordinal = 0;
  uint64_t memory_bytes = 0;       // the GPU's memory
  int driver_version = 0;          // cuDriverGetVersion (GPU only)
  std::pair<int, int> nvrtc_version{0, 0};
  // Why the CPU was chosen: "--device=cpu", or what the GPU lacked.
  std::string reason;
  // The chosen GPU (its primary context is retained on first use and
  // released when the last copy of the selection goes); null on the CPU.
  std::shared_ptr<GpuDevice> gpu_device;
  // --device=gpu with TESSERA_GPU_EMULATION=1 where no GPU is usable: the
  // host emulation stands in for one (emulated_backend.h; for testing).
  // `gpu` is set, `gpu_device` null, `reason` says why there is no GPU.
  bool emulated = false;

  // One line for --stats: "cpu (auto: libcuda.so.1 not found ...)" or
  // "NVIDIA H100 80GB HBM3 (sm_90a, 79.1 GiB), CUDA driver 13.0, NVRTC 13.0".
  std::string describe() const;
};

// The NVRTC target for compute capability major.minor: "sm_80", "sm_89";
// "sm_90a" for 9.0, whose wgmma and setmaxnreg exist only in the
// architecture-specific target.
std::string gpu_arch(int major, int minor);

// Where select_device gets the driver and NVRTC; each is asked for only when
// needed (never for DeviceChoice::Cpu). Tests pass their own.
struct DeviceLibraries {
  std::function<const CudaDriver&()> driver;
  std::function<const NvrtcLibrary&()> nvrtc;
  // The process's: CudaDriver::get() and NvrtcLibrary::get().
  static DeviceLibraries process();
};

// Chooses the device. Auto and Cpu never throw; Gpu throws DeviceError
// "--device=gpu: no usable GPU: WHY" when the GPU cannot be used, unless
// TESSERA_GPU_EMULATION=1 asks for the host emulation instead.
DeviceSelection select_device(DeviceChoice choice);
DeviceSelection select_device(DeviceChoice choice, const DeviceLibraries& libraries);

}  // namespace tessera::device
