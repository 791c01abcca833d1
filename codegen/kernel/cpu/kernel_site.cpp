#include "codegen/kernel/cpu/kernel_site.h"

#include <chrono>

#include "codegen/kernel/cpu/kernel_calls.h"
#include "codegen/kernel/cpu/kernel_tuner.h"

namespace tessera::kir {

namespace {

// A symbol is dynamic once its value has changed this many times.
constexpr int kChangesToDynamic = 2;

// "kernel k1a2b3c4d5e6 (mul add tanh)": the trace tree's node for the
// region (runtime/trace_graph.h) and its operations.
std::string kernel_span_name(const Region& r) { return "kernel " + region_report_id(r) + " (" + region_ops_text(r) + ")"; }

EventFields compiled_event(const StoredKernel& k, const char* tier) {
  return {{"kernel", k.name},
          {"tier", std::string(tier)},
          {"device", std::string("cpu")},
          {"ms", k.ms},
          {"source", std::string(k.from_disk ? "disk" : "compiled")}};
}

}  // namespace

KernelSite::KernelSite(const Region& r, KernelCalls& calls)
    : region_(r), device_(calls.device()), calls_(calls), config_(calls.config()) {
  calls_.counters().sites.fetch_add(1, std::memory_order_relaxed);
}

const CpuRegionKernel* KernelSite::k2() {
  if (k2_ || k2_refused_) return k2_.get();
  try {
    Kernel k = lower_region(region_, "region");
    auto stored = calls_.store().get(std::move(k), region_.str());
    k2_ = std::make_shared<const CpuRegionKernel>(region_, stored->kernel, stored->fn);
    calls_.counters().k2.fetch_add(1, std::memory_order_relaxed);
    if (!stored->reported.exchange(true)) calls_.event("kernel.compiled", [&] { return compiled_event(*stored, "K2"); });
  } catch (const std::exception& e) {
    k2_refused_ = true;
    calls_.note_failure(e.what());
    calls_.event("kernel.refused", [&] {
      return EventFields{{"device", std::string("cpu")}, {"reason", std::string(e.what())}};
    });
  }
  return k2_.get();
}

void KernelSite::collect() {
  if (!pending_ || !pending_->done.load(std::memory_order_acquire)) return;
  if (pending_->kernel) {
    if (k3_.empty()) calls_.counters().promotions.fetch_add(1, std::memory_order_relaxed);
    k3_.push_back(pending_->kernel);
    current_ = k3_.size() - 1;
  }
  pending_.reset();
}

Value KernelSite::run(std::span<const Value> inputs) {
  if (!calls_.spans()) return run_kernels(inputs);
  // The timeline: a span per call, on the thread's track.
  using namespace std::chrono;
  const double start = duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
  Value out = run_kernels(inputs);
  const double end = duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
  if (std::shared_ptr<KernelEventSink> e = calls_.events()) {
    if (span_name_.empty()) span_name_ = kernel_span_name(region_);
    // What the call moved (its tensor inputs and its output) and, for a
    // leading matrix product, its multiply-adds: the achieved GB/s and GFLOP/s.
    int64_t bytes = static_cast<int64_t>(out.is_tensor() ? out.as_tensor()->nbytes() : 0);
    for (const Value& v : inputs)
      if (v.is_tensor()) bytes += static_cast<int64_t>(v.as_tensor()->nbytes());
    int64_t flops = 0;
    if (region_.leading_step() && region_.ops.front().op == OpId::MatMul) {
      const RegionOp& mm = region_.ops.front();
      const TensorObj& a = *inputs[static_cast<size_t>(region_.index_of(mm.args[0]))].as_tensor();
      const TensorObj& b = *inputs[static_cast<size_t>(region_.index_of(mm.args[1]))].as_tensor();
      if (a.rank() >= 1 && b.rank() >= 1) flops = 2 * a.numel * b.shape.back();
    }
    KernelSpan span;
    span.start_ms = start;
    span.end_ms = end;
    span.gpu = device_ != nullptr;
    span.ops = static_cast<int64_t>(region_.ops.size());
    span.bytes = bytes;
    span.flops = flops;
    e->kernel_span(span_name_, span);
  }
  return out;
}

Value KernelSite::run_kernels(std::span<const Value> inputs) {
  if (device_)
    if (std::optional<Value> out = device_->run(region_, device_site_, inputs)) return std::move(*out);
  KernelCalls::Counters& c = calls_.counters();
  std::optional<std::vector<int64_t>> sym = bind_symbols(region_, inputs);
  const CpuRegionKernel* k = nullptr;
  if (sym) {
    collect();
    if (!k3_.empty() && k3_[current_]->fits(*sym)) {
      k = k3_[current_].get();
    } else {
      for (size_t i = 0; i < k3_.size() && !k; ++i)
        if (k3_[i]->fits(*sym)) k = k3_[current_ = i].get();
    }
    if (k) {
      c.k3_runs.fetch_add(1, std::memory_order_relaxed);
    } else if ((k = k2())) {
      c.k2_runs.fetch_add(1, std::memory_order_relaxed);
      observe(*sym);
    }
  }
  if (!k) {
    c.reference_runs.fetch_add(1, std::memory_order_relaxed);
    return run_region_reference(region_, inputs).at(0);
  }
  // (A leading matmul's result is made, for the generated kernel to read.)
  c.not_allocated.fetch_add(region_.ops.size() - region_.outputs.size() - (region_.leading_step() ? 1 : 0),
                            std::memory_order_relaxed);
  return k->run_bound(inputs, *sym)[0];
}

void KernelSite::observe(const std::vector<int64_t>& sym) {
  if (last_.empty() && !sym.empty()) {
    last_ = sym;
    changes_.assign(sym.size(), 0);
    dynamic_.assign(sym.size(), false);
    streak_ = 1;
  } else {
    bool settled = true;  // the non-dynamic symbols kept their values
    for (size_t s = 0; s < sym.size(); ++s) {
      if (sym[s] == last_[s]) continue;
      if (++changes_[s] >= kChangesToDynamic && !dynamic_[s]) {
        dynamic_[s] = true;
        calls_.counters().dynamic_dims.fetch_add(1, std::memory_order_relaxed);
        calls_.event("kernel.dynamic", [&] {
          return EventFields{{"symbol", static_cast<int64_t>(s)}, {"device", std::string("cpu")}};
        });
      } else if (!dynamic_[s]) {
        settled = false;
      }
      last_[s] = sym[s];
    }
    streak_ = settled ? streak_ + 1 : 1;
  }
  const KernelCallConfig& cfg = config_;
  if (cfg.specialize <= 0 || streak_ < cfg.specialize || pending_) return;
  bool any_static = false;
  for (bool d : dynamic_) any_static |= !d;
  if (!any_static) return;  // every dim is dynamic (or there are none): K2 it is
  if (requested_ >= cfg.recompiles) {
    if (requested_ == cfg.recompiles) {
      ++requested_;  // counted once
      calls_.counters().capped.fetch_add(1, std::memory_order_relaxed);
    }
    return;
  }
  request_k3(sym);
}

void KernelSite::request_k3(const std::vector<int64_t>& sym) {
  if (requested_++ > 0) calls_.counters().recompiles.fetch_add(1, std::memory_order_relaxed);
  std::vector<std::optional<int64_t>> spec(sym.size());
  for (size_t s = 0; s < sym.size(); ++s)
    if (!dynamic_[s]) spec[s] = sym[s];
  calls_.event("kernel.k3", [&] {
    std::string dims;
    for (const auto& d : spec) dims += (dims.empty() ? "" : ",") + (d ? std::to_string(*d) : std::string("?"));
    return EventFields{{"dims", dims}, {"device", std::string("cpu")}};
  });
  pending_ = std::make_shared<Pending>();
  auto job = [pending = pending_, region = region_, spec, sym, &calls = calls_] {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      TuneOutcome t = tune_region(region, spec, sym, calls.store());
      RegionLowering opt;
      opt.tile = t.best.tile;
      opt.flat = t.best.flat;
      opt.symbol_values = spec;
      auto stored = calls.store().get(lower_region(region, "region", opt), region.str());
      pending->kernel = std::make_shared<const CpuRegionKernel>(region, stored->kernel, stored->fn, t.best.threads);
      calls.counters().k3.fetch_add(1, std::memory_order_relaxed);
      calls.event("kernel.tuned", [&] {
        return EventFields{{"choice", t.best.str()},
                           {"variants", static_cast<int64_t>(t.timings_us.size())},
                           {"device", std::string("cpu")}};
      });
      if (!stored->reported.exchange(true)) calls.event("kernel.compiled", [&] { return compiled_event(*stored, "K3"); });
    } catch (const std::exception& e) {
      calls.note_failure(e.what());
    }
    const auto us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    calls.counters().tune_us.fetch_add(static_cast<uint64_t>(us), std::memory_order_relaxed);
    pending->done.store(true, std::memory_order_release);
  };
  if (config_.background) {
    calls_.queue().post(std::move(job));
  } else {
    job();
    collect();
  }
}

}  // namespace tessera::kir
