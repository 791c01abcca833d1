#include "vm/interp/interpreter.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "vm/builtins/builtin.h"
#include "vm/core/error.h"
#include "vm/interp/source_echo.h"
#include "vm/interp/vm.h"

namespace tessera {

Interpreter::Interpreter(VM& vm, std::unique_ptr<Module> module)
    : vm_(vm),
      // Trace exits may rebuild up to maxinline (<= 100) inlined frames
      // above the depth limit; calls never go past it.
      frames_(static_cast<size_t>(vm.options().max_depth), 128) {
  stack_.resize(1024);
  frames_.region().stack = stack_.data();
  frames_.region().stack_end = stack_.data() + stack_.size();
  frames_.region().update_push_limit();
  max_depth_ = static_cast<size_t>(vm_.options().max_depth);
  load(std::move(module));
}

void Interpreter::load(std::unique_ptr<Module> module) {
  const size_t old_n = globals_.size();
  const size_t n = module->global_names.size();
  // Growing the vectors moves them: the JIT's view of them is renewed below.
  globals_.resize(n);
  global_watch_.resize(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const auto& slot = module->global_slots[i];
    switch (slot.init) {
      case Module::GlobalInit::Kept: break;
      case Module::GlobalInit::Undefined:
        if (i >= old_n) globals_[i] = Value::undef();
        break;
      case Module::GlobalInit::Function:
        if (i < old_n) store_global(static_cast<uint32_t>(i), Value::function(slot.function));
        else globals_[i] = Value::function(slot.function);
        break;
      case Module::GlobalInit::Builtin:
        globals_[i] = builtin_global_value(module->global_names[i]);
        break;
    }
  }
  for (auto& fn : module->functions) {
    fn->hotcounts.assign(fn->code.size(), hooks_ ? hooks_->hotloop_threshold() : 0);
    if (hooks_) fn->entry_hotcount = hooks_->hotcall_threshold();
  }
  if (hooks_) hooks_->watch_globals(global_watch_.data(), globals_.data(), global_watch_.size());
  // An earlier module's functions may still be referenced (by globals, by
  // traces): it lives as long as the interpreter.
  if (module_) earlier_modules_.push_back(std::move(module_));
  module_ = std::move(module);
  if (!earlier_modules_.empty())
    for (auto& fn : module_->functions) function_files_[fn.get()] = &module_->filename;
}

std::optional<uint32_t> Interpreter::find_global(std::string_view name) const {
  const auto& names = module_->global_names;
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name && !globals_[i].is_undef()) return static_cast<uint32_t>(i);
  return std::nullopt;
}

void Interpreter::store_global(uint32_t index, Value v) {
  globals_[index] = std::move(v);
  if (global_watch_[index] && hooks_) hooks_->on_global_store(index);
}

uint32_t Interpreter::define_global(const std::string& name, Value v) {
  auto& names = module_->global_names;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != name) continue;
    module_->global_slots[i].declared = true;
    store_global(static_cast<uint32_t>(i), std::move(v));
    return static_cast<uint32_t>(i);
  }
  names.push_back(name);
  module_->global_slots.push_back({Module::GlobalInit::Kept, nullptr, true});
  globals_.push_back(std::move(v));
  global_watch_.push_back(0);
  if (hooks_) hooks_->watch_globals(global_watch_.data(), globals_.data(), global_watch_.size());
  return static_cast<uint32_t>(names.size() - 1);
}

Interpreter::~Interpreter() {
  const bool compile_reads_module = hooks_ && hooks_->interpreter_gone();
  // Values first (they may reference constants' objects), then the module.
  stack_.clear();
  globals_.clear();
  // A background compile still reads the functions (the process ends
  // without waiting for it): the module stays, for the moment left.
  if (compile_reads_module) static_cast<void>(module_.release());
}

void Interpreter::set_jit_hooks(JitHooks* hooks) {
  hooks_ = hooks;
  std::fill(global_watch_.begin(), global_watch_.end(), 0);
  if (!hooks_) return;
  hooks_->watch_globals(global_watch_.data(), globals_.data(), global_watch_.size());
  const uint16_t loop = hooks_->hotloop_threshold();
  const uint32_t call = hooks_->hotcall_threshold();
  hotwork_ = hooks_->hotwork_elements();
  tensor_work = 0;  // work done before this program (another VM on this thread) is not its loops
  auto reset = [&](Module& m) {
    for (auto& fn : m.functions) {
      fn->hotcounts.assign(fn->code.size(), loop);
      fn->entry_hotcount = call;
    }
  };
  for (auto& m : earlier_modules_) reset(*m);
  reset(*module_);
}

void Interpreter::grow_stack(size_t needed) {
  size_t n = stack_.size();
  while (n < needed) n *= 2;
  stack_.resize(n);
  frames_.region().stack = stack_.data();
  frames_.region().stack_end = stack_.data() + stack_.size();
  frames_.region().update_push_limit();
}

bool Interpreter::run_main(ScriptError& err) {
  FunctionProto* main = module_->main();
  ensure_stack(static_cast<size_t>(main->nregs) + 1);
  frames_.push_back(CallFrame{main, main->code.data(), 0});
  return run_frames(err, false);
}

bool Interpreter::call(const Value& callee, std::span<const Value> args, Value& result, ScriptError& err) {
  if (callee.is_builtin()) {
    const BuiltinDef* bd = callee.as_builtin();
    return trap_errors(err, [&] {
      CallArgs ca;
      ca.pos = args;
      ca.callee = bd;
      check_arity(bd->name, ca, bd->min_args, bd->max_args, bd->accepts_kwargs);
      result = bd->fn(vm_, ca);
    });
  }
  if (!callee.is_func()) {
    err = make_error(fmt::format("value is not a function (got {})", type_name(callee)));
    return false;
  }
  FunctionProto* fn = callee.as_func();
  if (fn->nparams != static_cast<int>(args.size())) {
    err = make_error(arity_message(fn->name.c_str(), fn->nparams, fn->nparams, static_cast<int>(args.size())));
    return false;
  }
  // The callee sits where a CALL instruction's callee would, its arguments
  // after it; RET leaves the result in its place.
  ensure_stack(static_cast<size_t>(fn->nregs) + 2);
  stack_[0] = callee;
  for (size_t i = 0; i < args.size(); ++i) stack_[1 + i] = args[i];
  frames_.push_back(CallFrame{fn, fn->code.data(), 1});
  if (hooks_) {
    if (--fn->entry_hotcount == 0) {
      fn->entry_hotcount = hooks_->hotcall_threshold();  // first: the hook may set a longer wait
      if (!recording_ && hooks_->on_hot_function(*fn)) recording_ = true;
    }
    if (fn->entry_trace >= 0 && !recording_) {
      const uint32_t base = trace_base();
      const uint32_t ret_pc = hooks_->call_function_trace(static_cast<uint32_t>(fn->entry_trace),
                                                          stack_.data() + base, globals_.data(), frames_.region(), exit_);
      if (ret_pc != TraceExit::kNotReturned) {
        if (vm_.deferred_error.empty()) {
          // The trace ran the call to its RET: return from here, as the
          // dispatch loop's RET would.
          CallFrame& f = frames_.back();
          result = take_return_value(fn->code[ret_pc], stack_.data() + f.base, fn->nregs);
          frames_.pop_back();
          stack_[0] = Value();
          return true;
        }
        // An error to raise at the RET (resume_at_exit raises it).
        exit_.pcs.assign(1, ret_pc);
        exit_.frames.clear();
        exit_.start_recording = false;
      }
      resume_at_exit();
      if (exit_.start_recording) recording_ = true;
    }
  }
  if (!run_frames(err, true)) return false;
  result = std::move(stack_[0]);
  stack_[0] = Value();
  return true;
}

template <class F>
bool Interpreter::trap_errors(ScriptError& err, F&& body) {
  try {
    body();
    return true;
  } catch (const RuntimeError& e) {
    err = make_error(e.what());
    // Raised by a host function: the innermost frame is the host's.
    if (!e.native_function.empty()) {
      ScriptError::Frame host;
      host.function = e.native_function;
      host.host = true;
      err.traceback.push_back(std::move(host));
    }
  } catch (const std::bad_alloc&) {
    err = make_error("out of memory");
  }
  return false;
}

bool Interpreter::run_frames(ScriptError& err, bool host_call) {
  running_ = true;
  // Restored, not cleared: a host's call made from inside a run returns to
  // the interpreting run around it.
  const bool was_interpreting = interpreter_samples.interpreting.exchange(true, std::memory_order_relaxed);
  const bool ok = trap_errors(err, [&] { execute(0); });
  interpreter_samples.interpreting.store(was_interpreting, std::memory_order_relaxed);
  running_ = false;
  if (recording_ && hooks_) {
    // A runtime error, or control back at a host's call with a recording
    // under way (a side trace following a host-called function's return).
    if (!ok) hooks_->recording_failed();
    else if (host_call) hooks_->recording_returned_to_host();
  }
  recording_ = false;
  if (ok) return true;
  // Drop the dead frames' registers so their objects are freed now.
  for (auto& v : stack_) v = Value();
  frames_.clear();
  return false;
}

const Module* Interpreter::module_of(const FunctionProto* fn) const {
  auto holds = [fn](const Module& m) {
    return std::any_of(m.functions.begin(), m.functions.end(), [fn](const auto& f) { return f.get() == fn; });
  };
  if (module_ && holds(*module_)) return module_.get();
  for (const auto& m : earlier_modules_)
    if (holds(*m)) return m.get();
  return nullptr;
}

ScriptError Interpreter::make_error(const std::string& message) const {
  ScriptError err;
  err.message = message;
  err.traceback.reserve(frames_.size());
  for (const CallFrame& f : frames_) {
    // f.pc is the next instruction; the one executing (or calling) is pc-1.
    size_t idx = static_cast<size_t>(f.pc - f.proto->code.data());
    if (idx > 0) --idx;
    int line = idx < f.proto->lines.size() ? f.proto->lines[idx] : f.proto->line;
    auto file = function_files_.find(f.proto);
    ScriptError::Frame fr;
    fr.function = f.proto->name;
    fr.line = line;
    if (file != function_files_.end()) fr.file = *file->second;
    fr.col = idx < f.proto->cols.size() ? f.proto->cols[idx] : 0;
    err.traceback.push_back(std::move(fr));
  }
  // The innermost frame's line, for the caret under what failed.
  if (!frames_.empty() && !err.traceback.empty()) {
    if (const Module* m = module_of(frames_.back().proto))
      err.traceback.back().source_line = std::string(source_line(m->source, err.traceback.back().line));
  }
  return err;
}

void FrameRegion::update_push_limit() {
  const size_t room = static_cast<size_t>(stack_end - stack);
  push_limit = room > trace_stack_need + 1 ? stack_end - (trace_stack_need + 1) : stack;
}

// Inline in its two callers: a host's call of a small compiled function
// pays little more than this (experiments/results/embedding-latest.md).
[[gnu::always_inline]] inline uint32_t Interpreter::trace_base() {
  const uint32_t base = frames_.back().base;
  const uint32_t need = hooks_->trace_stack_need();
  ensure_stack(static_cast<size_t>(base) + need + 1);  // a grown stack updates the push limit itself
  if (frames_.region().trace_stack_need != need) [[unlikely]] {
    frames_.region().trace_stack_need = need;
    frames_.region().update_push_limit();
  }
  return base;
}

void Interpreter::resume_at_exit() {
  // Recursion in compiled code may have pushed or popped frames: the exit
  // is in the top frame.
  CallFrame& f = frames_.back();
  const uint32_t exit_base = f.base;
  f.pc = f.proto->code.data() + exit_.pcs[0];
  for (size_t i = 0; i < exit_.frames.size(); ++i) {
    const TraceExit::Frame& fr = exit_.frames[i];
    frames_.push_back(CallFrame{fr.proto, fr.proto->code.data() + exit_.pcs[i + 1], exit_base + fr.base});
  }
  // A helper met an error the operation must not be redone around (a GPU
  // kernel that faulted): raised here, at the operation the trace left at.
  if (!vm_.deferred_error.empty()) throw FatalRuntimeError(std::exchange(vm_.deferred_error, {}));
}

void Interpreter::enter_trace(uint32_t id) {
  const uint32_t base = trace_base();
  interpreter_samples.interpreting.store(false, std::memory_order_relaxed);  // the trace's time is its own
  hooks_->run_trace(id, stack_.data() + base, globals_.data(), frames_.region(), exit_);
  interpreter_samples.interpreting.store(true, std::memory_order_relaxed);
  resume_at_exit();
}

void Interpreter::take_interpreter_samples(const FunctionProto& fn, uint32_t pc) {
  const uint32_t n = interpreter_samples.pending.exchange(0, std::memory_order_relaxed);
  if (n != 0 && hooks_) hooks_->on_interpreter_samples(fn, pc, n);
}

void Interpreter::raise_call_error(const Value& callee, const FunctionProto* proto,
                                   const Instr* call_pc, int nargs) const {
  if (callee.is_func()) {
    const FunctionProto* f = callee.as_func();
    throw RuntimeError(arity_message(f->name.c_str(), f->nparams, f->nparams, nargs));
  }
  const std::string* name =
      proto->call_name_at(static_cast<uint32_t>(call_pc - proto->code.data()));
  if (name)
    throw RuntimeError(fmt::format("'{}' is not a function (got {})", *name, type_name(callee)));
  throw RuntimeError(fmt::format("value is not a function (got {})", type_name(callee)));
}

}  // namespace tessera
