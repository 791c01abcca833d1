#include "runtime/kernels/kernel_site.h"

#include <chrono>

#include "codegen/kernel/kernel_events.h"
#include "runtime/kernels/kernel_runtime.h"
#include "vm/core/nvtx_ranges.h"

namespace tessera::kernels {

using jit::JitEventKind;
using kir::EventFields;

namespace {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// "kernel k1a2b3c4d5e6 (mul add tanh)": the trace tree's node for the
// region (runtime/trace_graph.h) and its operations.
std::string kernel_span_name(const Region& r) {
  return "kernel " + kir::region_report_id(r) + " (" + kir::region_ops_text(r) + ")";
}

// A kernel is ready: counted by the caller, reported once (sites share the
// store's kernels). `kernel` is the site's name everywhere (the metrics, the
// timeline, the viewer: kir::region_report_id); `build` names this compiled
// variant, as its --dump files do.
void report_compiled(const KernelRuntime& rt, const KernelTarget& target, const Region& region, const TargetKernel& k) {
  if (!k.stored || k.stored->reported.exchange(true)) return;
  rt.event(JitEventKind::KernelCompiled, [&] {
    return EventFields{{"kernel", kir::region_report_id(region)},
                       {"build", k.stored->name},
                       {"tier", std::string(k.tier())},
                       {"device", std::string(target.name())},
                       {"ms", k.stored->ms},
                       {"source", std::string(k.stored->from_disk ? "disk" : "compiled")}};
  });
}

void report_tuned(const KernelRuntime& rt, const KernelTarget& target, const Region& region, const KernelVariant& choice,
                  size_t variants, std::optional<double> ms) {
  rt.event(JitEventKind::KernelTuned, [&] {
    EventFields f{{"kernel", kir::region_report_id(region)},
                  {"choice", choice.str()},
                  {"variants", static_cast<int64_t>(variants)},
                  {"device", std::string(target.name())}};
    if (ms) f.emplace_back("ms", *ms);
    return f;
  });
}

}  // namespace

KernelSite::KernelSite(std::shared_ptr<const Region> r, KernelRuntime& runtime)
    : region_(std::move(r)), runtime_(runtime) {
  const ShapePolicyParams p{runtime.config().specialize, runtime.config().recompiles, runtime.config().hot_calls,
                            runtime.config().hot_ms};
  if (std::shared_ptr<KernelTarget> d = runtime.device()) {
    TargetCounters& c = runtime.counters(*d);
    targets_.emplace_back(std::move(d), c, p);
  }
  // The CPU target is the runtime's; the site holds it without owning it.
  targets_.emplace_back(std::shared_ptr<KernelTarget>(std::shared_ptr<KernelTarget>{}, &runtime.cpu()),
                        runtime.counters(runtime.cpu()), p);
}

const std::string& KernelSite::id() {
  if (site_id_.empty()) site_id_ = kir::region_report_id(*region_);
  return site_id_;
}

void KernelSite::post(std::function<void()> job) {
  if (runtime_.config().background) runtime_.queue().post(std::move(job));
  else job();
}

void KernelSite::refuse(OnTarget& t, const std::string& why) {
  t.refused = true;
  runtime_.note_failure(*t.target, why);
  runtime_.event(JitEventKind::KernelRefused, [&] {
    return EventFields{{"kernel", id()}, {"device", std::string(t.target->name())}, {"reason", why}};
  });
}

const TargetKernel* KernelSite::k2(OnTarget& t) {
  if (!t.k2) {
    t.counters->sites.fetch_add(1, std::memory_order_relaxed);
    if (std::string why = t.target->refuses(*region_); !why.empty()) {
      refuse(t, why);
      return nullptr;
    }
    t.k2 = std::make_shared<Built>();
    auto job = [built = t.k2, target = t.target, region = region_, &rt = runtime_, &c = *t.counters] {
      try {
        built->kernel = target->compile(*region, {}, KernelVariant{});
        c.k2.fetch_add(1, std::memory_order_relaxed);
        report_compiled(rt, *target, *region, *built->kernel);
      } catch (const std::exception& e) {
        built->error = e.what();
      }
      built->done.store(true, std::memory_order_release);
    };
    if (t.target->builds_k2_in_background()) post(std::move(job));
    else job();
  }
  if (!t.k2->ready()) return nullptr;
  if (!t.k2->kernel) {
    refuse(t, t.k2->error);
    return nullptr;
  }
  return t.k2->kernel.get();
}

void KernelSite::collect(OnTarget& t) {
  if (!t.k3_pending || !t.k3_pending->ready()) return;
  if (std::shared_ptr<const TargetKernel> k = t.k3_pending->kernel) {
    if (t.k3.empty()) t.counters->promotions.fetch_add(1, std::memory_order_relaxed);
    t.k3.push_back(std::move(k));
    t.current = t.k3.size() - 1;
  }
  t.k3_pending.reset();
}

void KernelSite::observe(OnTarget& t, const std::vector<int64_t>& sym) {
  TargetCounters& c = *t.counters;
  // The site's device time, where the target measures it (a GPU's CUPTI
  // records), for the K3 decision by time.
  auto device_ms = [&]() -> std::optional<double> {
    return t.target->site_device_ms(id());
  };
  const ShapePolicy::Decision d = t.policy.observe(sym, t.k3_pending != nullptr || !t.tuning.empty(), device_ms);
  for (size_t s : d.now_dynamic) {
    c.dynamic_dims.fetch_add(1, std::memory_order_relaxed);
    runtime_.event(JitEventKind::KernelDynamic, [&] {
      return EventFields{{"kernel", id()}, {"symbol", static_cast<int64_t>(s)}, {"device", std::string(t.target->name())}};
    });
  }
  if (d.capped_now) c.capped.fetch_add(1, std::memory_order_relaxed);
  if (!d.ask) return;
  if (d.recompile) c.recompiles.fetch_add(1, std::memory_order_relaxed);
  if (d.by_time) c.promoted_by_time.fetch_add(1, std::memory_order_relaxed);
  request_k3(t, *d.ask, sym);
  collect(t);  // made before the call goes on when there is no background compiler
}

void KernelSite::request_k3(OnTarget& t, const DimSpec& spec, const std::vector<int64_t>& sym) {
  runtime_.event(JitEventKind::KernelPromoted, [&] {
    return EventFields{{"kernel", id()}, {"dims", dims_text(spec)}, {"device", std::string(t.target->name())}};
  });
  KernelRuntime& rt = runtime_;
  TargetCounters& c = *t.counters;
  std::shared_ptr<KernelTarget> target = t.target;
  // One variant, compiled (K2's when the target does not tune, or an earlier run's choice).
  auto compile_one = [&](const KernelVariant& v) {
    t.k3_pending = std::make_shared<Built>();
    post([pending = t.k3_pending, target, region = region_, spec, v, &rt, &c] {
      try {
        pending->kernel = target->compile(*region, spec, v);
        c.k3.fetch_add(1, std::memory_order_relaxed);
        report_compiled(rt, *target, *region, *pending->kernel);
      } catch (const std::exception& e) {
        rt.note_failure(*target, e.what());
      }
      pending->done.store(true, std::memory_order_release);
    });
  };
  if (!target->tunes()) return compile_one(KernelVariant{});
  if (std::optional<KernelVariant> kept = rt.tuner().kept(target->arch(), *region_, spec)) {
    c.k3_kept.fetch_add(1, std::memory_order_relaxed);
    report_tuned(rt, *target, *region_, *kept, 0, std::nullopt);
    return compile_one(*kept);
  }
  const std::vector<KernelVariant> variants = target->variants(*region_, spec, sym);
  if (target->times_at_call()) {
    // Every variant is built now; the first call of these shapes once all are times them (run_on).
    t.tuning_spec = spec;
    for (const KernelVariant& v : variants) {
      auto built = std::make_shared<Built>();
      t.tuning.push_back(built);
      post([built, target, region = region_, spec, v, &rt] {
        try {
          built->kernel = target->compile(*region, spec, v);
          report_compiled(rt, *target, *region, *built->kernel);
        } catch (const std::exception& e) {
          built->error = e.what();
        }
        built->done.store(true, std::memory_order_release);
      });
    }
    return;
  }
  // Compiled and timed on the background thread.
  t.k3_pending = std::make_shared<Built>();
  post([pending = t.k3_pending, target, region = region_, spec, sym, variants, &rt, &c] {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      std::vector<std::shared_ptr<const TargetKernel>> ks;
      for (const KernelVariant& v : variants) ks.push_back(target->compile(*region, spec, v));
      auto time = target->timer(*region, sym);
      const TuneOutcome o = KernelTuner::fastest(variants, [&](size_t i) { return time(*ks[i]); },
                                                 target->timing_plan());
      rt.tuner().keep(target->arch(), *region, spec, o.best);
      for (size_t i = 0; i < variants.size(); ++i)
        if (variants[i] == o.best && !pending->kernel) pending->kernel = ks[i];
      c.k3.fetch_add(1, std::memory_order_relaxed);
      c.k3_tuned.fetch_add(1, std::memory_order_relaxed);
      c.variants_timed.fetch_add(o.timings_ms.size(), std::memory_order_relaxed);
      report_tuned(rt, *target, *region, o.best, o.timings_ms.size(), std::nullopt);
      report_compiled(rt, *target, *region, *pending->kernel);
    } catch (const std::exception& e) {
      rt.note_failure(*target, e.what());
    }
    const auto us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    c.tune_us.fetch_add(static_cast<uint64_t>(us), std::memory_order_relaxed);
    pending->done.store(true, std::memory_order_release);
  });
}

std::optional<Value> KernelSite::run_on(OnTarget& t, std::span<const Value> inputs, const std::vector<int64_t>& sym) {
  TargetCounters& c = *t.counters;
  collect(t);
  // A K3 kernel made for these symbols' values, else the variants of a
  // tuning timed at this call (once all are built), else K2.
  const TargetKernel* k = nullptr;
  if (!t.k3.empty() && t.k3[t.current]->fits(sym)) k = t.k3[t.current].get();
  for (size_t i = 0; i < t.k3.size() && !k; ++i)
    if (t.k3[i]->fits(sym)) k = t.k3[t.current = i].get();
  CallTuning tuning;
  std::vector<std::shared_ptr<const TargetKernel>> candidates;
  if (!k && !t.tuning.empty()) {
    bool ready = true;
    for (const auto& b : t.tuning) ready = ready && b->ready();
    if (ready && t.tuning.front()->kernel && t.tuning.front()->kernel->fits(sym)) {
      for (const auto& b : t.tuning)
        if (b->kernel) candidates.push_back(b->kernel), tuning.candidates.push_back(b->kernel.get());
      k = candidates.front().get();
    } else if (ready && !t.tuning.front()->kernel) {
      runtime_.note_failure(*t.target, t.tuning.front()->error);
      t.tuning.clear();  // K2 goes on serving
    }
  }
  const bool k3 = k != nullptr;
  if (!k) {
    if (!(k = k2(t))) {
      if (!t.refused) c.while_building.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
    observe(t, sym);
  }
  std::string why;
  std::optional<Value> out =
      t.target->launch(*region_, *k, inputs, sym, candidates.empty() ? nullptr : &tuning, why);
  if (!out) {
    refuse(t, why);
    return std::nullopt;
  }
  if (!candidates.empty()) {
    const std::shared_ptr<const TargetKernel>& won = candidates.at(tuning.best);
    if (t.k3.empty()) c.promotions.fetch_add(1, std::memory_order_relaxed);
    t.k3.push_back(won);
    t.current = t.k3.size() - 1;
    t.tuning.clear();
    runtime_.tuner().keep(t.target->arch(), *region_, t.tuning_spec, won->variant);
    c.k3.fetch_add(1, std::memory_order_relaxed);
    c.k3_tuned.fetch_add(1, std::memory_order_relaxed);
    const size_t timed = tuning.outcome ? tuning.outcome->timings_ms.size() : 1;
    c.variants_timed.fetch_add(timed, std::memory_order_relaxed);
    c.tune_us.fetch_add(static_cast<uint64_t>(tuning.ms * 1000), std::memory_order_relaxed);
    report_tuned(runtime_, *t.target, *region_, won->variant, timed, tuning.ms);
  }
  (k3 ? c.k3_runs : c.k2_runs).fetch_add(1, std::memory_order_relaxed);
  // (A leading step's result is made, for the generated kernel to read.)
  c.not_allocated.fetch_add(
      region_->ops.size() - region_->outputs.size() - (region_->leading_step() ? 1 : 0), std::memory_order_relaxed);
  return out;
}

const std::string& KernelSite::span_name() {
  if (span_name_.empty()) span_name_ = kernel_span_name(*region_);
  return span_name_;
}

Value KernelSite::run(std::span<const Value> inputs) {
  const bool spans = runtime_.events() && runtime_.events()->wants_spans();
  const double start = spans ? now_ms() : 0;
  const KernelTarget* ran = nullptr;
  Value out;
  // Nsight's range for the call, named as the timeline's span; the device's
  // phases (copy, mma, reduce) nest in it, and `host` where the host computes it.
  const nvtx::Range call([&]() -> const std::string& { return span_name(); });
  if (std::optional<std::vector<int64_t>> sym = bind_symbols(*region_, inputs)) {
    for (OnTarget& t : targets_) {
      if (t.refused) {
        t.counters->refused.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      const nvtx::Range host(nvtx::Phase::Host, t.target.get() == &runtime_.cpu());
      if (std::optional<Value> v = run_on(t, inputs, *sym)) {
        out = std::move(*v);
        ran = t.target.get();
        break;
      }
      if (t.refused) t.counters->refused.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (!ran) {
    const nvtx::Range host(nvtx::Phase::Host);
    runtime_.reference_runs().fetch_add(1, std::memory_order_relaxed);
    out = run_region_reference(*region_, inputs).at(0);
  }
  if (!spans) return out;
  // The timeline: a span per call, on the thread's track: what the call
  // moved (its tensor inputs and its output) and, for a leading matrix
  // product, its multiply-adds: the achieved GB/s and GFLOP/s.
  const double end = now_ms();
  const Region& r = *region_;
  int64_t bytes = static_cast<int64_t>(out.is_tensor() ? out.as_tensor()->nbytes() : 0);
  for (const Value& v : inputs)
    if (v.is_tensor()) bytes += static_cast<int64_t>(v.as_tensor()->nbytes());
  int64_t flops = 0;
  if (r.leading_step() && r.ops.front().op == OpId::MatMul) {
    const RegionOp& mm = r.ops.front();
    const TensorObj& a = *inputs[static_cast<size_t>(r.index_of(mm.args[0]))].as_tensor();
    const TensorObj& b = *inputs[static_cast<size_t>(r.index_of(mm.args[1]))].as_tensor();
    if (a.rank() >= 1 && b.rank() >= 1) flops = 2 * a.numel * b.shape.back();
  }
  kir::KernelSpan span;
  span.start_ms = start;
  span.end_ms = end;
  span.gpu = ran && ran != &runtime_.cpu();
  span.ops = static_cast<int64_t>(r.ops.size());
  span.bytes = bytes;
  span.flops = flops;
  runtime_.events()->kernel_span(span_name(), span);
  return out;
}

}  // namespace tessera::kernels
