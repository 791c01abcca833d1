// tsr_vm: what the C ABI's VM handle (include/tessera/tessera.h) is.
//
// It bundles one tessera::VM running a session (every source in one
// namespace), the JIT runtime installed into it (a HotspotObserver, made
// when the VM first runs code, so that JIT parameters and dumps may still
// be set before), the handles the host holds, the host functions it
// registered, and the last error. The C ABI functions (c_api_*.cpp) are
// thin: they check their arguments against this and translate statuses.
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "tessera/tessera.h"
#include "runtime/device/device_selection.h"
#include "runtime/embed/value_handles.h"
#include "runtime/hotspot_observer.h"
#include "runtime/jit_event_log.h"
#include "runtime/jit_params.h"
#include "vm/core/builtin_def.h"
#include "vm/interp/vm.h"

namespace tessera::embed {

// A std::streambuf that hands what is written to a tsr_write_fn, in chunks
// of up to 4 KiB and at every flush.
class CallbackStreambuf final : public std::streambuf {
 public:
  CallbackStreambuf(tsr_write_fn fn, void* user) : fn_(fn), user_(user) { setp(buf_, buf_ + sizeof buf_); }

 protected:
  int_type overflow(int_type ch) override;
  int sync() override;

 private:
  void drain();
  tsr_write_fn fn_;
  void* user_;
  char buf_[4096];
};

// A registered host function: the BuiltinDef scripts call (its `host`
// points back here) and the host's callback.
struct HostFunction {
  std::string name;
  tsr_host_fn fn;
  void* user;
  tsr_vm* vm;
  BuiltinDef def;
};

// What tsr_stat counts.
struct EmbedCounters {
  int64_t host_calls = 0;           // tsr_call / tsr_call_global
  int64_t host_function_calls = 0;  // scripts' calls of host functions
  int64_t tensor_bytes_copied = 0;  // tensors that crossed the API by copy (non-row-major DLPack)
  int64_t tensors_wrapped = 0;      // tsr_wrap_tensor and DLPack imports without a copy
  int64_t tensors_exported = 0;     // tsr_tensor_to_dlpack
};

}  // namespace tessera::embed

struct tsr_vm {
  tsr_vm(const tsr_vm_options& opts, uint16_t tag);
  ~tsr_vm();
  tsr_vm(const tsr_vm&) = delete;
  tsr_vm& operator=(const tsr_vm&) = delete;

  // Makes the JIT runtime and installs it (the first run or call does).
  void start();
  // Records a failure: its message (and traceback) for tsr_last_error.
  tsr_status fail(tsr_status status, std::string message, std::string traceback = {});
  tsr_status ok() {
    last_error.clear();
    last_traceback.clear();
    return TSR_SUCCESS;
  }
  // The status of a VM run or call, with its error kept.
  tsr_status from_run(tessera::RunStatus status);

  std::unique_ptr<tessera::embed::CallbackStreambuf> out_buf, err_buf;
  std::unique_ptr<std::ostream> out_stream, err_stream;
  tessera::JitParams params;
  std::optional<tessera::device::DeviceSelection> device;
  std::string dump_dir;
  std::unique_ptr<tessera::VM> vm;
  std::unique_ptr<tessera::HotspotObserver> observer;
  std::shared_ptr<tessera::jit::JitEventLog> events;
  bool started = false;
  // When start() ran: the statistics' wall time runs from there, so that it
  // covers the host's calls (timing each call would cost more than a small
  // call itself) and, between them, the host's own time.
  std::chrono::steady_clock::time_point started_at;

  tessera::embed::ValueHandles handles;
  std::list<tessera::embed::HostFunction> host_functions;  // stable addresses: scripts and traces point at them
  tessera::embed::EmbedCounters counters;
  std::vector<tessera::Value> call_args;  // reused by tsr_call

  std::string last_error, last_traceback;
  std::optional<std::string> raised;  // tsr_raise's message, for the host function that returns it
  int in_host_function = 0;           // nesting of host functions running now
};

namespace tessera::embed {

// The registry of live VMs, so that a destroyed VM passed again is
// recognised rather than read.
bool vm_is_live(const tsr_vm* vm);
void vm_register(const tsr_vm* vm);
void vm_unregister(const tsr_vm* vm);
uint16_t next_vm_tag();

// The calling thread's last error of a call without a VM (tsr_vm_create).
std::string& thread_last_error();

}  // namespace tessera::embed
