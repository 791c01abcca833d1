#include "runtime/embed/embedded_vm.h"

#include <atomic>
#include <filesystem>
#include <mutex>
#include <shared_mutex>
#include <unordered_set>

#include "vm/interp/interpreter.h"

namespace tessera::embed {

namespace {

// The one process-wide table of the embedding layer: which VM addresses are
// live. It holds no VM state, only the answer to "was this VM destroyed?".
struct LiveVMs {
  std::shared_mutex mutex;
  std::unordered_set<const tsr_vm*> vms;
};
LiveVMs& live_vms() {
  static LiveVMs* table = new LiveVMs;  // never destroyed: VMs may outlive static destruction
  return *table;
}

}  // namespace

bool vm_is_live(const tsr_vm* vm) {
  if (!vm) return false;
  LiveVMs& t = live_vms();
  std::shared_lock lock(t.mutex);
  return t.vms.count(vm) != 0;
}

void vm_register(const tsr_vm* vm) {
  LiveVMs& t = live_vms();
  std::unique_lock lock(t.mutex);
  t.vms.insert(vm);
}

void vm_unregister(const tsr_vm* vm) {
  LiveVMs& t = live_vms();
  std::unique_lock lock(t.mutex);
  t.vms.erase(vm);
}

uint16_t next_vm_tag() {
  static std::atomic<uint32_t> counter{0};
  uint16_t tag;
  do tag = static_cast<uint16_t>(counter.fetch_add(1) + 1);
  while (tag == 0);
  return tag;
}

std::string& thread_last_error() {
  thread_local std::string message;
  return message;
}

CallbackStreambuf::int_type CallbackStreambuf::overflow(int_type ch) {
  drain();
  if (!traits_type::eq_int_type(ch, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
  }
  return traits_type::not_eof(ch);
}

int CallbackStreambuf::sync() {
  drain();
  return 0;
}

void CallbackStreambuf::drain() {
  const auto n = static_cast<size_t>(pptr() - pbase());
  if (n != 0 && fn_) fn_(user_, pbase(), n);
  setp(buf_, buf_ + sizeof buf_);
}

}  // namespace tessera::embed

using tessera::embed::CallbackStreambuf;

tsr_vm::tsr_vm(const tsr_vm_options& opts, uint16_t tag) : handles(tag) {
  tessera::VMOptions vo;
  vo.keep_session = true;
  vo.max_depth = opts.max_depth > 0 ? opts.max_depth : 10000;
  if (opts.out) {
    out_buf = std::make_unique<CallbackStreambuf>(opts.out, opts.out_user);
    out_stream = std::make_unique<std::ostream>(out_buf.get());
    vo.out = out_stream.get();
  }
  if (opts.err) {
    err_buf = std::make_unique<CallbackStreambuf>(opts.err, opts.err_user);
    err_stream = std::make_unique<std::ostream>(err_buf.get());
    vo.err = err_stream.get();
  }
  vo.report_errors = opts.err != nullptr;
  vm = std::make_unique<tessera::VM>(std::move(vo));
  params.enabled = opts.jit != 0;
}

tsr_vm::~tsr_vm() {
  // The session's values before the handles' (either may hold the other's
  // objects; both only drop references), then the runtime the session used.
  handles.clear();
  vm.reset();
  if (events) events->finish();
  observer.reset();
}

void tsr_vm::start() {
  if (started) return;
  started = true;
  started_at = std::chrono::steady_clock::now();
  observer = std::make_unique<tessera::HotspotObserver>(params);
  observer->set_script_name("<embedded>");
  if (!dump_dir.empty()) {
    events = std::make_shared<tessera::jit::JitEventLog>();
    events->write_jsonl((std::filesystem::path(dump_dir) / "events.jsonl").string());
    observer->set_event_log(events);
  }
  if (device) observer->set_device(std::move(*device));
  device.reset();
  if (params.enabled) {
    observer->enable_tracing(*vm, dump_dir);
    vm->set_jit_hooks(observer.get());
    // The session may exist already (a host function or global bound
    // before the first run): it takes the hooks now.
    if (tessera::Interpreter* s = vm->session()) s->set_jit_hooks(observer.get());
  }
}

tsr_status tsr_vm::fail(tsr_status status, std::string message, std::string traceback) {
  last_error = std::move(message);
  last_traceback = std::move(traceback);
  return status;
}

tsr_status tsr_vm::from_run(tessera::RunStatus status) {
  const tessera::VMError& e = vm->last_error();
  switch (status) {
    case tessera::RunStatus::Ok: return ok();
    case tessera::RunStatus::CompileError:
      // The whole report: the message with its line, column and caret.
      return fail(e.message.empty() ? TSR_EIO : TSR_ESYNTAX, e.report.empty() ? e.message : e.report);
    case tessera::RunStatus::RuntimeError:
      return fail(e.message == "out of memory" ? TSR_EOOM : TSR_ERUNTIME, e.message, e.traceback);
  }
  return fail(TSR_ERUNTIME, e.message, e.traceback);
}
