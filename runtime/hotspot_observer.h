// HotspotObserver: the runtime layer's implementation of the interpreter's
// JitHooks. It observes the hot spots the interpreter reports (which loops
// and functions became hot, how often) and, once tracing is enabled, hands
// them to the trace compiler (jit::TraceJit), which records, compiles and
// runs traces; the other hooks go straight to it. It also prints the
// `--stats` report: the parameters, the device, the hot spots and the traces.
//
// One HotspotObserver per VM (no global state). Events are copied out of the
// FunctionProto at the time they happen (name, source line), because the
// module's protos die with the interpreter, before the report is printed.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/device/device_selection.h"
#include "runtime/kernels/gpu_target.h"
#include "runtime/kernels/kernel_runtime.h"
#include "runtime/jit_params.h"
#include "runtime/trace_jit.h"
#include "vm/interp/jit_hooks.h"

namespace tessera {

class HotspotObserver : public JitHooks {
 public:
  explicit HotspotObserver(JitParams params = {});
  ~HotspotObserver();  // waits for the kernel runtime's background job

  const JitParams& params() const { return params_; }
  // File name used for "FILE:LINE" in the report (the script's path).
  void set_script_name(std::string name) { script_name_ = std::move(name); }

  // The device chosen for tensor kernels (--device); the report says which
  // and why. Kept for the run: a GPU's primary context lives as long. With
  // a GPU (or its host emulation), fused calls run there (the VM's kernel
  // runtime's device target).
  // Throws DeviceError when the GPU cannot be started.
  void set_device(device::DeviceSelection selection);
  // Or the device is chosen when first needed (--device=auto): at the first
  // fused kernel call, or for the report (the selection alone, no GPU
  // backend). A start never probes for a GPU the program does not use. A GPU
  // that cannot be started then leaves the CPU, the report says why.
  void choose_device_at_first_use(device::DeviceChoice choice);
  // The selection; with a choice pending, it is made now (for a report).
  const std::optional<device::DeviceSelection>& device() const;

  // The event log (--jit-log, events.jsonl) the JIT and the fused calls'
  // kernels report to, from now until this observer goes. Call before
  // enable_tracing. With a timeline, the process's collectives are drawn on
  // it too (world_timeline.h; one observer per process: the last log's).
  void set_event_log(std::shared_ptr<jit::JitEventLog> log);
  // Profiling samples the interpreter took, by source line (the script's
  // own functions: FunctionProto::file is the script): the viewer's heat.
  void on_interpreter_samples(const FunctionProto& fn, uint32_t pc, uint32_t n) override;
  const std::map<int, uint64_t>& interpreter_line_samples() const { return interp_samples_; }
  // The fused calls per kernel, where the event log keeps them (--metrics,
  // --dump), else null.
  const jit::KernelCallTally* kernel_tally() const;
  // Turns on the trace compiler (record, compile, enter traces). Without it
  // hot code is only observed. `dump_dir`: see TraceJit.
  void enable_tracing(VM& vm, const std::string& dump_dir = {});
  const jit::TraceJit* tracing() const { return tracing_.get(); }
  // The VM's fused calls: their kernels, targets and counters.
  const kernels::KernelRuntime& kernels() const { return kernels_; }
  kernels::KernelRuntime& kernels() { return kernels_; }
  // --dump: the first file of a trace or kernel that could not be written
  // ("PATH: REASON"), or "" (the CLI reports it and exits 1).
  std::string dump_error() const;
  // After enable_tracing: see TraceJit::set_abandon_compile_at_exit.
  void abandon_compile_at_exit() {
    if (tracing_) tracing_->set_abandon_compile_at_exit(true);
  }
  bool compile_abandoned() const { return tracing_ && tracing_->compile_abandoned(); }
  // After enable_tracing: sample CPU time per host tier for print_stats.
  void enable_tier_profile();

  // JitHooks. on_hot_loop records the event and, with tracing enabled, asks
  // the trace compiler whether to start recording.
  bool on_hot_loop(FunctionProto& fn, uint32_t pc) override;
  bool record(FunctionProto* fn, uint32_t pc, const Value* stack, size_t frame_base,
              const Value* globals) override;
  void recording_failed() override;
  void recording_returned_to_host() override;
  void run_trace(uint32_t id, Value* base, Value* globals, FrameRegion& frames, TraceExit& exit) override;
  uint32_t call_function_trace(uint32_t id, Value* base, Value* globals, FrameRegion& frames,
                               TraceExit& exit) override;
  bool on_hot_function(FunctionProto& fn) override;
  void watch_globals(uint8_t* watch, const Value* globals, size_t n) override;
  void on_global_store(uint32_t index) override;
  bool interpreter_gone() override;
  uint16_t hotloop_threshold() const override;
  uint32_t hotcall_threshold() const override;
  uint32_t hotwork_elements() const override;

  // A loop back-edge that reached its hot count at least once.
  struct HotLoop {
    std::string function;  // FunctionProto::name
    std::string file;      // FunctionProto::file (empty: the script's name)
    int function_line;     // line of the function's `fn` (tells same-named functions apart)
    uint32_t pc;           // instruction index of the back-edge (FORLOOP/ITERLOOP/LOOP)
    std::string opcode;    // that instruction's opcode name
    int line;              // source line of the back-edge instruction
    uint64_t times;        // how often it became hot (once per `hotloop` back-edges)
  };
  struct HotFunction {
    std::string function;
    std::string file;  // FunctionProto::file (empty: the script's name)
    int line;        // line of the `fn` keyword
    uint64_t times;  // how often its entry became hot (once per `hotcall` calls)
  };
  // In the order they first became hot.
  const std::vector<HotLoop>& hot_loops() const { return loops_; }
  const std::vector<HotFunction>& hot_functions() const { return functions_; }

  // After the run: the GPU's kernels' records (CUPTI) are taken, after
  // waiting for the device, so that the reports and the timeline have them.
  void finish_device();
  // The GPU target, if a kernel ran on a GPU (its profile: CUPTI's records
  // for --metrics and the trace viewer); null otherwise.
  std::shared_ptr<const kernels::GpuTarget> gpu_target() const;

  // The human-readable `--stats` report. `wall_seconds` is measured by the
  // caller (it spans the front end's compile too).
  // `wall_note` says what the wall time covers.
  void print_stats(std::ostream& os, double wall_seconds, const std::string& wall_note = "compile and interpret") const;

 private:
  JitParams params_;
  std::string script_name_ = "?";
  std::map<int, uint64_t> interp_samples_;
  kernels::KernelRuntime kernels_;  // before tracing_, whose traces call it
  std::unique_ptr<jit::TraceJit> tracing_;
  // Made on first use under choose_device_at_first_use (hence mutable):
  // device_mu_ guards the three.
  mutable std::mutex device_mu_;
  mutable std::optional<device::DeviceChoice> pending_choice_;
  mutable std::optional<device::DeviceSelection> device_;
  std::shared_ptr<kernels::GpuTarget> gpu_;  // the kernel runtime's device target
  // device_ from pending_choice_, if one is pending; device_mu_ held.
  void select_pending_device() const;
  // The GPU backend and kernel device for device_ (null on the CPU); throws
  // DeviceError when the GPU cannot be started.
  std::shared_ptr<kernels::GpuTarget> make_gpu_device();
  std::shared_ptr<jit::JitEventLog> events_;  // also the kernel runtime's
  std::vector<HotLoop> loops_;
  std::vector<HotFunction> functions_;
  // Keyed by content, not by FunctionProto*: a proto's address may be reused
  // by the next script a VM runs, its name and line are not (within a file).
  std::map<std::tuple<std::string, int, uint32_t>, size_t> loop_index_;
  std::map<std::pair<std::string, int>, size_t> function_index_;
};

}  // namespace tessera
