#include "runtime/hotspot_observer.h"

#include <fmt/format.h>

#include <ostream>

#include "runtime/comm/process_world.h"
#include "runtime/device/emulated_backend.h"
#include "runtime/world_timeline.h"
#ifndef TESSERA_NO_CUDA_HEADERS
#include "runtime/device/cuda_backend.h"
#endif
#include "vm/bytecode/bytecode.h"
#include "vm/core/nvtx_ranges.h"
#include "vm/graph/collectives.h"

namespace tessera {

namespace {

// The observer whose event log the process's collectives report to (the
// last that set one); only it takes the report away when it goes.
const HotspotObserver* collectives_reported_to = nullptr;

}  // namespace

HotspotObserver::HotspotObserver(JitParams params) : params_(std::move(params)) {}

HotspotObserver::~HotspotObserver() {
  if (collectives_reported_to == this) {
    process_collectives().set_observer(nullptr);
    collectives_reported_to = nullptr;
  }
  // Its compiles report to the log, which may go with this observer.
  if (events_) kernels_.drain_background();
  kernels_.cancel_background();
}

std::string HotspotObserver::dump_error() const {
  if (tracing_)
    if (std::string e = tracing_->telemetry().dump_error(); !e.empty()) return e;
  return kernels_.dump_error();
}

void HotspotObserver::set_event_log(std::shared_ptr<jit::JitEventLog> log) {
  events_ = std::move(log);
  kernels_.set_events(events_);
  if (gpu_) gpu_->set_events(events_);
  if (jit::JitTimeline* tl = events_ ? events_->timeline() : nullptr) {
    // The log lives as long as this observer, which takes the report away when it goes.
    process_collectives().set_observer([tl](const CollectiveRecord& r) {
      const Collectives& world = process_collectives();
      jit::draw_collective(*tl, r, world.rank(), world.size());
    });
    collectives_reported_to = this;
  }
}

void HotspotObserver::set_device(device::DeviceSelection selection) {
  std::lock_guard<std::mutex> lock(device_mu_);
  pending_choice_.reset();
  device_ = std::move(selection);
  gpu_ = make_gpu_device();
  if (gpu_) kernels_.set_device(gpu_);
}

void HotspotObserver::choose_device_at_first_use(device::DeviceChoice choice) {
  {
    std::lock_guard<std::mutex> lock(device_mu_);
    pending_choice_ = choice;
    device_.reset();
  }
  kernels_.set_device_resolver([this]() -> std::shared_ptr<kernels::KernelTarget> {
    std::lock_guard<std::mutex> lock(device_mu_);
    select_pending_device();
    if (!gpu_) {
      try {
        gpu_ = make_gpu_device();
      } catch (const device::DeviceError& e) {
        device::DeviceSelection cpu;
        cpu.choice = device_->choice;
        cpu.reason = std::string("the GPU could not be started: ") + e.what();
        device_ = std::move(cpu);
      }
    }
    return gpu_;
  });
}

const std::optional<device::DeviceSelection>& HotspotObserver::device() const {
  std::lock_guard<std::mutex> lock(device_mu_);
  select_pending_device();
  return device_;
}

void HotspotObserver::select_pending_device() const {
  if (!pending_choice_) return;
  device_ = device::select_device(*pending_choice_);
  pending_choice_.reset();
}

std::shared_ptr<kernels::GpuTarget> HotspotObserver::make_gpu_device() {
  if (!device_ || !device_->gpu) return nullptr;
  std::shared_ptr<device::DeviceBackend> backend;
  if (device_->emulated) backend = std::make_shared<device::EmulatedBackend>();
#ifndef TESSERA_NO_CUDA_HEADERS
  else backend = std::make_shared<device::CudaBackend>(*device_);
#endif
  if (!backend) return nullptr;
  kernels::GpuTarget::Options opt;
  opt.tune = params_.gputune != 0;
  opt.tf32 = params_.tf32 != 0;
  opt.cupti = params_.cupti != 0;
  opt.kprofile = params_.kprofile != 0;
  auto gpu = std::make_shared<kernels::GpuTarget>(std::move(backend), kernels_.store(), opt);
  if (events_) gpu->set_events(events_);
  return gpu;
}

// Thresholds come from validated parameters (1..65535, jit_params.def), so
// the narrowing casts cannot truncate.
uint16_t HotspotObserver::hotloop_threshold() const {
  return static_cast<uint16_t>(params_.hotloop);
}
uint32_t HotspotObserver::hotwork_elements() const { return static_cast<uint32_t>(params_.hotwork); }
uint32_t HotspotObserver::hotcall_threshold() const {
  return static_cast<uint32_t>(params_.hotcall);
}

bool HotspotObserver::on_hot_loop(FunctionProto& fn, uint32_t pc) {
  auto key = std::make_tuple(fn.name, fn.line, pc);
  auto it = loop_index_.find(key);
  if (it != loop_index_.end()) {
    ++loops_[it->second].times;
    return tracing_ && tracing_->start_recording(fn, pc);
  }
  const int line = pc < fn.lines.size() ? fn.lines[pc] : 0;
  const std::string opcode = pc < fn.code.size() ? op_info(fn.code[pc].op).name : "?";
  loop_index_.emplace(std::move(key), loops_.size());
  loops_.push_back(HotLoop{fn.name, fn.file, fn.line, pc, opcode, line, 1});
  return tracing_ && tracing_->start_recording(fn, pc);
}

void HotspotObserver::enable_tracing(VM& vm, const std::string& dump_dir) {
  tracing_ = std::make_unique<jit::TraceJit>(vm, params_, kernels_, script_name_, dump_dir, events_);
  tracing_->report_stack_need_to(trace_stack_need_);
}

bool HotspotObserver::record(FunctionProto* fn, uint32_t pc, const Value* stack, size_t frame_base,
                        const Value* globals) {
  return tracing_ && tracing_->record(fn, pc, stack, frame_base, globals);
}

void HotspotObserver::recording_failed() {
  if (tracing_) tracing_->recording_failed();
}

void HotspotObserver::recording_returned_to_host() {
  if (tracing_) tracing_->recording_failed(jit::AbortReason::ReturnedToHost);
}

void HotspotObserver::run_trace(uint32_t id, Value* base, Value* globals, FrameRegion& frames, TraceExit& exit) {
  tracing_->run_trace(id, base, globals, frames, exit);
}

uint32_t HotspotObserver::call_function_trace(uint32_t id, Value* base, Value* globals, FrameRegion& frames,
                                              TraceExit& exit) {
  return tracing_->call_function_trace(id, base, globals, frames, exit);
}

void HotspotObserver::watch_globals(uint8_t* watch, const Value* globals, size_t n) {
  if (tracing_) tracing_->watch_globals(watch, globals, n);
}

bool HotspotObserver::interpreter_gone() {
  if (!tracing_) return false;
  tracing_->stop_compiling();
  return tracing_->compile_abandoned();
}

void HotspotObserver::on_global_store(uint32_t index) {
  if (tracing_) tracing_->invalidate_global(index);
}

bool HotspotObserver::on_hot_function(FunctionProto& fn) {
  auto key = std::make_pair(fn.name, fn.line);
  auto it = function_index_.find(key);
  if (it != function_index_.end()) {
    ++functions_[it->second].times;
  } else {
    function_index_.emplace(std::move(key), functions_.size());
    functions_.push_back(HotFunction{fn.name, fn.file, fn.line, 1});
  }
  return tracing_ && tracing_->start_function_recording(fn);
}

void HotspotObserver::on_interpreter_samples(const FunctionProto& fn, uint32_t pc, uint32_t n) {
  interp_samples_[jit::source_line(fn, pc)] += n;
}

const jit::KernelCallTally* HotspotObserver::kernel_tally() const { return events_ ? events_->tally() : nullptr; }

void HotspotObserver::enable_tier_profile() {
  if (tracing_) tracing_->enable_tier_profile();
}

void HotspotObserver::finish_device() {
  std::shared_ptr<kernels::GpuTarget> gpu;
  {
    std::lock_guard<std::mutex> lock(device_mu_);
    gpu = gpu_;
  }
  if (gpu) gpu->finish_profile();
}

std::shared_ptr<const kernels::GpuTarget> HotspotObserver::gpu_target() const {
  std::lock_guard<std::mutex> lock(device_mu_);
  return gpu_;
}

void HotspotObserver::print_stats(std::ostream& os, double wall_seconds, const std::string& wall_note) const {
  os << "tessera-vm stats\n";
  if (!params_.enabled) {
    os << "  jit: off (interpreter only; hot-code detection not installed)\n";
  } else if (tracing_) {
    os << "  jit: on (hot loops and functions are recorded as traces and compiled with asmjit (T1) and LLVM ORC "
          "(T2))\n";
  } else {
    os << "  jit: on (hot-code detection only: no trace compiler installed)\n";
  }
  os << "  parameters:";
  for (const auto& [name, value] : params_.list()) {
    if (name == "tier" && value == 0) os << " tier=auto";  // as it is spelled on the command line
    else os << " " << name << "=" << value;
  }
  os << "\n";
  os << comm::collectives_stats_line();
  if (const auto& d = device()) os << fmt::format("  device: {}\n", d->describe());
  if (gpu_) os << gpu_->report(kernels_);
  else if (const auto& d = device())
    os << fmt::format("  gpu profile: CUPTI not loaded: no kernel ran on a GPU (device: {})\n", d->describe());
  // attached() asks NVTX once; with no tool it loads nothing.
  os << (nvtx::attached() ? "  nvtx: a tool is attached (NVTX_INJECTION64_PATH): ranges of the Tessera domain\n"
                          : "  nvtx: no tool attached: nothing loaded, ranges are not made\n");
  if (params_.enabled) {
    os << fmt::format("  hot loops: {} (each reported once per {} back-edges{})\n", loops_.size(), params_.hotloop,
                      params_.hotwork ? fmt::format(", fewer after tensor work: one more per {} elements made",
                                                    params_.hotwork)
                                      : "");
    for (const HotLoop& l : loops_) {
      os << fmt::format("    {}:{}  in {}  {} at pc {}  hot {} time{}\n", l.file.empty() ? script_name_ : l.file, l.line,
                        l.function, l.opcode, l.pc, l.times, l.times == 1 ? "" : "s");
    }
    os << fmt::format("  hot functions: {} (each reported once per {} calls)\n", functions_.size(),
                      params_.hotcall);
    for (const HotFunction& f : functions_) {
      os << fmt::format("    {}:{}  {}  hot {} time{}\n", f.file.empty() ? script_name_ : f.file, f.line, f.function, f.times,
                        f.times == 1 ? "" : "s");
    }
  }
  if (tracing_) tracing_->print_stats(os);
  os << fmt::format("  wall time: {:.3f} ms ({})\n", wall_seconds * 1e3, wall_note);
}

}  // namespace tessera
