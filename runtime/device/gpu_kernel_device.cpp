#include "runtime/device/gpu_kernel_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "codegen/kernel/cuda/cuda_region.h"
#include "codegen/kernel/kernel_disk_cache.h"
#include "codegen/kernel/lower_region.h"
#include "runtime/device/device_error.h"
#include "vm/core/error.h"

namespace tessera::device {

using kir::EventFields;

namespace {

// Dims of a region value's tensor for these symbols' values.
Shape shape_of(const RegionType& t, const std::vector<int64_t>& sym) {
  Shape s;
  for (int d : t.dims) s.push_back(d == kDimOne ? 1 : sym.at(static_cast<size_t>(d)));
  return s;
}

int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// The value tile lower_attention is given: the value dim rounded up to 16, at least 16.
constexpr int64_t kAttentionValueTile = 64;

}  // namespace

// A tensor's elements in one of the device's blocks: a kernel output's,
// left there until the host reads them, or a mirror of a host tensor a
// kernel read (host_current), kept until the host touches it.
class GpuBlockCopy : public DeviceCopy {
 public:
  GpuBlockCopy(std::shared_ptr<GpuKernelDevice> owner, DeviceBackend& backend, DevicePtr block, bool host_current)
      : owner_(std::move(owner)), backend_(backend), block_(block), host_current_(host_current) {}
  ~GpuBlockCopy() override { backend_.allocator().free(block_); }
  // A device that fails here (a lost GPU, a kernel that faulted) fails the
  // script's operation that needed the elements, as a runtime error.
  void to_host(void* host, size_t bytes) override {
    if (host_current_) return;
    try {
      backend_.download(host, block_, bytes);
    } catch (const DeviceError& e) {
      throw RuntimeError(std::string("the GPU could not give back a tensor's elements: ") + e.what());
    }
    owner_->note_download(bytes);
  }
  const GpuKernelDevice* owner() const { return owner_.get(); }
  DevicePtr block() const { return block_; }

 private:
  std::shared_ptr<GpuKernelDevice> owner_;  // keeps the device (and its memory) alive
  DeviceBackend& backend_;
  DevicePtr block_;
  bool host_current_;
};

// One kernel of a site: K2 (dims are parameters) or K3 (the settled dims
// constants, one of the tuner's variants), with attention's kernel for a
// leading attention.
struct GpuKernelDevice::Variant {
  DimSpec spec;             // K3: the constant dims; empty: K2
  GpuVariant choice;        // K3: its tile, layout and block size
  kir::Kernel main;         // the region's kernel (after its leading step, if any)
  kir::CudaKernelSource main_src;
  std::optional<kir::Kernel> step;  // attention's kernel
  std::optional<kir::CudaKernelSource> step_src;
  struct Built {
    std::atomic<bool> done{false};
    std::shared_ptr<LaunchableKernel> main, step;
    std::string error;
  };
  std::shared_ptr<Built> built = std::make_shared<Built>();

  bool ready() const { return built->done.load(std::memory_order_acquire); }
  bool usable() const { return ready() && built->error.empty(); }
  bool fits(const std::vector<int64_t>& sym) const {
    for (size_t d = 0; d < spec.size() && d < sym.size(); ++d)
      if (spec[d] && *spec[d] != sym[d]) return false;
    return true;
  }
};

// A K3 kernel being tuned: every variant is built in the background; the
// first call of its shapes once all are built times them and keeps the
// fastest. The first variant also builds the leading attention's kernel,
// which the variants share.
struct GpuKernelDevice::Tuning {
  std::vector<std::unique_ptr<Variant>> candidates;
  bool ready() const {
    for (const auto& c : candidates)
      if (!c->ready()) return false;
    return true;
  }
};

// A call site: its K2 kernel, the K3 kernels its settled shapes asked for,
// and what it has seen of its shapes (the CPU site's policy: kernel_site.h).
struct GpuKernelDevice::Site {
  bool refused = false;
  std::string why;
  Variant k2;
  std::vector<std::unique_ptr<Variant>> k3;
  std::unique_ptr<Tuning> tuning;
  int k3_asked = 0;  // tuned, kept or given up: at most `recompiles`
  std::vector<int64_t> last;
  std::vector<int> changes;
  std::vector<bool> dynamic;
  int streak = 0;
};

GpuKernelDevice::GpuKernelDevice(std::shared_ptr<DeviceBackend> backend, Options options)
    : backend_(std::move(backend)), opt_(std::move(options)), tune_notes_(opt_.tune_cache_dir) {}

// Lowers, emits and builds (in the background, or now) one variant, with
// the leading attention's kernel when `with_step`; throws what lowering and
// emitting throw.
void GpuKernelDevice::prepare(const Region& r, Variant& v, bool with_step) {
  const kir::RegionLowering opt = v.spec.empty() ? kir::RegionLowering{} : v.choice.lowering(v.spec);
  const int threads = v.spec.empty() ? 0 : v.choice.threads;  // 0: from the kernel's tile (untuned)
  v.main = kir::lower_region(r, "region", opt);
  v.main_src = kir::emit_cuda_kernel(v.main, "tsr_region", kir::cuda_target_for(r, threads));
  if (with_step && r.leading_step() && r.ops.front().op == OpId::Attention) {
    v.step = kir::lower_attention(r, "attention", opt, kAttentionValueTile);
    v.step_src = kir::emit_cuda_kernel(*v.step, "tsr_attention", kir::cuda_target_for(r));
  }
  auto job = [this, backend = backend_, built = v.built, main = v.main_src, step = v.step_src, k3 = !v.spec.empty()] {
    const auto start = std::chrono::steady_clock::now();
    try {
      built->main = backend->build(main);
      if (step) built->step = backend->build(*step);
    } catch (const std::exception& e) {
      built->error = e.what();
    }
    if (built->error.empty())
      event("kernel.compiled", [&] {
        return EventFields{
            {"kernel", "cuda-" + kir::KernelDiskCache::hash_hex(main.source)},
            {"tier", std::string(k3 ? "K3" : "K2")},
            {"device", std::string("gpu")},
            {"ms", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count()}};
      });
    built->done.store(true, std::memory_order_release);
  };
  if (opt_.background) queue_.post(std::move(job));
  else job();
}

// The CPU site's policy: a symbol whose value changed twice is dynamic;
// `specialize` calls in a row with the other symbols unchanged ask for a K3
// kernel with those as constants, at most `recompiles` of them per site. The
// variant an earlier run's tuning kept for these dims is built alone;
// otherwise every variant is built, to be timed (tune).
void GpuKernelDevice::observe(const Region& r, Site& s, const std::vector<int64_t>& sym) {
  if (s.last.empty()) {
    s.last = sym;
    s.changes.assign(sym.size(), 0);
    s.dynamic.assign(sym.size(), false);
    s.streak = 1;
  } else {
    bool settled = true;
    for (size_t d = 0; d < sym.size(); ++d) {
      if (sym[d] == s.last[d]) continue;
      if (++s.changes[d] >= 2 && !s.dynamic[d]) {
        s.dynamic[d] = true;
        event("kernel.dynamic", [&] {
          return EventFields{{"symbol", static_cast<int64_t>(d)}, {"device", std::string("gpu")}};
        });
      } else if (!s.dynamic[d]) {
        settled = false;
      }
      s.last[d] = sym[d];
    }
    s.streak = settled ? s.streak + 1 : 1;
  }
  if (opt_.specialize <= 0 || s.streak < opt_.specialize || s.k3_asked >= opt_.recompiles || s.tuning) return;
  for (const auto& k : s.k3)
    if (!k->ready()) return;  // one at a time
  DimSpec spec(sym.size());
  bool any = false;
  for (size_t d = 0; d < sym.size(); ++d)
    if (!s.dynamic[d]) spec[d] = sym[d], any = true;
  if (!any) return;  // every dim is dynamic: K2 it is
  event("kernel.k3", [&] {
    std::string dims;
    for (const auto& d : spec) dims += (dims.empty() ? "" : ",") + (d ? std::to_string(*d) : std::string("?"));
    return EventFields{{"dims", dims}, {"device", std::string("gpu")}};
  });
  ++s.k3_asked;
  s.streak = 0;
  auto variant = [&](const GpuVariant& choice, bool with_step) -> std::unique_ptr<Variant> {
    auto v = std::make_unique<Variant>();
    v->spec = spec;
    v->choice = choice;
    try {
      prepare(r, *v, with_step);
    } catch (const std::exception&) {
      return nullptr;  // the K2 kernel goes on serving
    }
    return v;
  };
  if (!opt_.tune) {
    if (auto v = variant(GpuVariant{kir::RegionLowering{}.tile, 0, false}, true)) s.k3.push_back(std::move(v));
    return;
  }
  if (std::optional<GpuVariant> kept = kept_gpu_variant(r, spec, backend_->arch(), tune_notes_)) {
    if (auto v = variant(*kept, true)) {
      s.k3.push_back(std::move(v));
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.k3_kept;
    }
    return;
  }
  auto t = std::make_unique<Tuning>();
  for (const GpuVariant& choice : gpu_variants(r, spec))
    if (auto v = variant(choice, t->candidates.empty())) t->candidates.push_back(std::move(v));
  if (!t->candidates.empty()) s.tuning = std::move(t);
}

// Times each built variant of the site's tuning on this call's buffers
// (`params`, as the region's kernel takes them), keeps the fastest as the
// site's K3 kernel for these dims and notes it for later runs. Returns it,
// or the K2 kernel when no variant could run.
const GpuKernelDevice::Variant* GpuKernelDevice::tune(const Region& r, Site& s, const std::vector<int64_t>& sym,
                                                      const std::vector<void*>& params) {
  std::unique_ptr<Tuning> t = std::move(s.tuning);
  const auto start = std::chrono::steady_clock::now();
  constexpr int kLaunches = 3;  // timed, after one that loads the module
  double best_ms = std::numeric_limits<double>::infinity();
  size_t best = t->candidates.size();
  uint64_t timed = 0;
  for (size_t i = 0; i < t->candidates.size(); ++i) {
    const Variant& c = *t->candidates[i];
    if (!c.usable()) continue;
    try {
      const std::vector<int64_t> grid = c.main.grid_extents(sym);
      std::vector<void*> args = kir::cuda_kernel_args(c.main_src, params, sym, grid);
      auto launch = [&] { c.built->main->launch(grid[0] * grid[1] * grid[2], args); };
      launch();
      const double ms = backend_->time_ms([&] {
        for (int k = 0; k < kLaunches; ++k) launch();
      }) / kLaunches;
      ++timed;
      if (ms < best_ms) best_ms = ms, best = i;
    } catch (const DeviceError&) {
      continue;  // a variant the device cannot launch (too many registers for its block)
    }
  }
  const double spent = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.variants_timed += timed;
    stats_.tune_ms += spent;
    if (best < t->candidates.size()) ++stats_.k3_tuned;
  }
  if (best == t->candidates.size()) return &s.k2;
  event("kernel.tuned", [&] {
    return EventFields{{"choice", t->candidates[best]->choice.str()},
                       {"variants", static_cast<int64_t>(timed)},
                       {"device", std::string("gpu")},
                       {"ms", spent}};
  });
  std::unique_ptr<Variant> won = std::move(t->candidates[best]);
  if (best != 0 && t->candidates.front()->step) {
    won->step = std::move(t->candidates.front()->step);  // the other variants go
    won->step_src = std::move(t->candidates.front()->step_src);
    won->built->step = t->candidates.front()->built->step;
  }
  keep_gpu_variant(r, won->spec, backend_->arch(), tune_notes_, won->choice);
  s.k3.push_back(std::move(won));
  return s.k3.back().get();
}

GpuKernelDevice::~GpuKernelDevice() { queue_.cancel(); }

void GpuKernelDevice::refuse(Site& s, const std::string& why) {
  s.refused = true;
  s.why = why;
  event("kernel.refused", [&] {
    return EventFields{{"device", std::string("gpu")}, {"reason", why}};
  });
  std::lock_guard<std::mutex> lock(mu_);
  if (stats_.first_refusal.empty()) stats_.first_refusal = why;
}

void GpuKernelDevice::set_events(std::shared_ptr<kir::KernelEventSink> e) {
  std::lock_guard<std::mutex> lock(mu_);
  events_ = std::move(e);
}

void GpuKernelDevice::note_download(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.downloads;
  stats_.download_bytes += bytes;
}

std::optional<Value> GpuKernelDevice::run(const Region& r, std::shared_ptr<void>& slot, std::span<const Value> inputs) {
  const std::optional<std::vector<int64_t>> sym = bind_symbols(r, inputs);
  if (!sym) return std::nullopt;  // the CPU's path raises the interpreter's error
  if (!slot) {
    auto s = std::make_shared<Site>();
    slot = s;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.sites;
    }
    try {
      const RegionOp* lead = r.leading_step() ? &r.ops.front() : nullptr;
      if (lead && lead->op == OpId::MatMul && !backend_->host_memory())
        for (int a : lead->args)
          if (r.type(a).dtype != DType::F32)
            throw DeviceError(std::string("a matrix product of ") + dtype_name(r.type(a).dtype) +
                              " on the GPU is not built (f32 products run on cuBLASLt)");
      prepare(r, s->k2, true);
    } catch (const std::exception& e) {
      refuse(*s, e.what());
    }
  }
  Site& s = *static_cast<Site*>(slot.get());
  if (!s.refused && s.k2.ready() && !s.k2.built->error.empty()) refuse(s, s.k2.built->error);
  if (s.refused) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.refused;
    return std::nullopt;
  }
  if (!s.k2.ready()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.cpu_while_building;
    return std::nullopt;
  }
  // A K3 kernel made for these shapes, else K2 (which notes the shapes);
  // variants being tuned for these shapes, once all are built, are timed at
  // the launch (their first has the leading step's kernel).
  const Variant* v = nullptr;
  bool tuning = false;
  if (s.tuning && s.tuning->ready() && s.tuning->candidates.front()->fits(*sym)) {
    tuning = s.tuning->candidates.front()->usable();
    if (tuning) v = s.tuning->candidates.front().get();
    else s.tuning.reset();  // the shared step's kernel could not be built: K2 goes on
  }
  for (const auto& k : s.k3)
    if (!v && k->usable() && k->fits(*sym)) v = k.get();
  if (!v) {
    v = &s.k2;
    observe(r, s, *sym);
  }

  // The params: the inputs, the leading step's result, the outputs.
  DeviceAllocator& alloc = backend_->allocator();
  std::vector<DevicePtr> temps;  // freed after the launch (stream-ordered)
  std::vector<DevicePtr> out_blocks;  // owned by the outputs once the launch is made
  // Host tensors uploaded for the call, which keep their block as a mirror once the launch is made.
  std::vector<std::pair<TensorObj*, DevicePtr>> mirrors;
  auto cleanup = [&] {
    for (DevicePtr p : temps) alloc.free(p);
    temps.clear();
  };
  try {
    union Scalar {
      float f;
      int64_t i;
      uint8_t b;
    };
    const size_t n_in = inputs.size();
    std::vector<void*> ptrs(n_in + 1 + r.outputs.size(), nullptr);
    std::vector<Scalar> scalars(n_in);
    std::vector<void*> params;
    uint64_t up = 0, up_bytes = 0, resident = 0;
    for (size_t i = 0; i < n_in; ++i) {
      const Value& v = inputs[i];
      if (!v.is_tensor()) {
        if (v.is_float()) scalars[i].f = static_cast<float>(v.as_float());
        else if (v.is_int()) scalars[i].i = v.as_int();
        else scalars[i].b = v.as_bool() ? 1 : 0;
        params.push_back(&scalars[i]);
        continue;
      }
      const TensorObj& t = *v.as_tensor();
      auto* held = dynamic_cast<const GpuBlockCopy*>(t.device_copy);
      auto same = std::find_if(mirrors.begin(), mirrors.end(), [&](const auto& m) { return m.first == &t; });
      if (held && held->owner() == this) {
        ptrs[i] = reinterpret_cast<void*>(held->block());
        ++resident;
      } else if (same != mirrors.end()) {
        ptrs[i] = reinterpret_cast<void*>(same->second);  // an input passed twice: uploaded once
      } else {
        const void* host = t.data();  // another device's copy comes back first
        const DevicePtr p = alloc.allocate(t.nbytes());
        mirrors.emplace_back(const_cast<TensorObj*>(&t), p);  // the elements do not change: only who holds them
        backend_->upload(p, host, t.nbytes());
        ptrs[i] = reinterpret_cast<void*>(p);
        ++up;
        up_bytes += t.nbytes();
      }
      params.push_back(&ptrs[i]);
    }
    // The leading step's result, which the region's kernel reads after the inputs.
    if (r.leading_step()) {
      const RegionOp& lead = r.ops.front();
      const Shape shape = shape_of(lead.type, *sym);
      const size_t bytes = static_cast<size_t>(numel_of(shape)) * dtype_size(lead.type.dtype);
      const DevicePtr p = alloc.allocate(bytes);
      temps.push_back(p);
      ptrs[n_in] = reinterpret_cast<void*>(p);
      if (lead.op == OpId::Attention) {
        std::vector<void*> step_params(params.begin(), params.end());
        step_params.push_back(&ptrs[n_in]);
        const int64_t dv = shape.back();
        if (dv > kAttentionValueTile)
          throw DeviceError(fmt::format("attention with a value dim of {} (over {}) on the GPU is not built", dv,
                                        kAttentionValueTile));
        const std::vector<int64_t> grid = v->step->grid_extents(*sym);
        std::vector<void*> args = kir::cuda_kernel_args(*v->step_src, step_params, *sym, grid);
        v->built->step->launch(grid[0] * grid[1] * grid[2], args);
      } else if (backend_->host_memory()) {
        // The emulation: the product by the interpreter's kernel, in place.
        const Value product = run_leading_step(r, inputs);
        backend_->upload(p, product.as_tensor()->data(), bytes);
      } else {
        const Shape a = shape_of(r.type(lead.args[0]), *sym), b = shape_of(r.type(lead.args[1]), *sym);
        if (a.size() < 2 || b.size() < 2 || a.size() > 3 || b.size() > 3)
          throw DeviceError("a matrix product of vectors or of rank over 3 on the GPU is not built");
        const int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
        const int64_t batch = a.size() == 3 ? a[0] : 1;
        if (b.size() == 3 && b[0] != batch) throw DeviceError("a batched product whose batches differ on the GPU is not built");
        auto dptr = [&](int arg) {
          return reinterpret_cast<DevicePtr>(ptrs[static_cast<size_t>(r.index_of(arg))]);
        };
        backend_->matmul_f32(batch, m, n, k, dptr(lead.args[0]), m * k, dptr(lead.args[1]), b.size() == 3 ? k * n : 0, p,
                             m * n);
      }
      params.push_back(&ptrs[n_in]);
    }
    std::vector<Value> outs;
    for (size_t o = 0; o < r.outputs.size(); ++o) {
      const RegionType& t = r.type(r.outputs[o]);
      outs.push_back(make_tensor(t.dtype, shape_of(t, *sym), false));
      out_blocks.push_back(alloc.allocate(outs.back().as_tensor()->nbytes()));
      ptrs[n_in + 1 + o] = reinterpret_cast<void*>(out_blocks.back());
      params.push_back(&ptrs[n_in + 1 + o]);
    }
    if (tuning) v = tune(r, s, *sym, params);
    const bool k3 = v != &s.k2;
    const std::vector<int64_t> grid = v->main.grid_extents(*sym);
    std::vector<void*> args = kir::cuda_kernel_args(v->main_src, params, *sym, grid);
    int64_t moved = 0;  // what the kernel reads and writes (its tensor inputs and outputs), for the timeline's GB/s
    for (const Value& in : inputs)
      if (in.is_tensor()) moved += static_cast<int64_t>(in.as_tensor()->nbytes());
    for (const Value& o : outs) moved += static_cast<int64_t>(o.as_tensor()->nbytes());
    launch_timed(r, *v, grid, args, moved);
    for (size_t o = 0; o < outs.size(); ++o)
      outs[o].as_tensor()->attach_device_copy(
          std::make_unique<GpuBlockCopy>(shared_from_this(), *backend_, out_blocks[o], false));
    out_blocks.clear();
    for (auto& [t, p] : mirrors) t->attach_device_copy(std::make_unique<GpuBlockCopy>(shared_from_this(), *backend_, p, true));
    mirrors.clear();
    cleanup();
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.launches;
    ++(k3 ? stats_.k3_launches : stats_.k2_launches);
    stats_.uploads += up;
    stats_.upload_bytes += up_bytes;
    stats_.resident_inputs += resident;
    return outs.at(0);
  } catch (const DeviceError& e) {
    for (DevicePtr p : out_blocks) alloc.free(p);
    for (auto& m : mirrors) alloc.free(m.second);
    cleanup();
    refuse(s, e.what());
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.refused;
    return std::nullopt;
  }
}

// Launches the region's kernel; when the event sink keeps a timeline, the
// launch is timed on the device (CUDA events; the emulation's clock) and
// reported as a span on the GPU's track, ending when the device finished.
// That waits for the device, so it happens only for --dump and --metrics.
void GpuKernelDevice::launch_timed(const Region& r, const Variant& v, const std::vector<int64_t>& grid,
                                   std::vector<void*>& args, int64_t bytes) {
  std::shared_ptr<kir::KernelEventSink> e;
  {
    std::lock_guard<std::mutex> lock(mu_);
    e = events_;
  }
  auto launch = [&] { v.built->main->launch(grid[0] * grid[1] * grid[2], args); };
  if (!e || !e->wants_spans()) {
    launch();
    return;
  }
  const double ms = backend_->time_ms(launch);
  const double end = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
  kir::KernelSpan span;
  span.start_ms = end - ms;
  span.end_ms = end;
  span.gpu = span.on_device = true;
  span.tier = v.spec.empty() ? "K2" : "K3";
  span.blocks = grid[0] * grid[1] * grid[2];
  span.bytes = bytes;
  e->kernel_span("gpu " + kir::region_report_id(r) + " (" + kir::region_ops_text(r) + ")", span);
}

GpuKernelDevice::Stats GpuKernelDevice::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.memory = backend_->allocator().stats();
  s.staging = backend_->staging();
  s.builds = backend_->build_stats();
  return s;
}

std::string GpuKernelDevice::report() const {
  const Stats s = stats();
  std::string out = fmt::format(
      "  gpu: {} fused calls on the device at {} sites (K2 {}, K3 {}; {} on the CPU while their kernel was built, {} "
      "refused{}); {} kernels built by {} in {:.1f} ms, {} from the kernel cache\n",
      s.launches, s.sites, s.k2_launches, s.k3_launches, s.cpu_while_building, s.refused,
      s.first_refusal.empty() ? "" : ", the first because: " + s.first_refusal.substr(0, s.first_refusal.find('\n')),
      s.builds.built, s.builds.compiler, s.builds.build_ms, s.builds.from_cache);
  if (s.k3_tuned || s.k3_kept || s.variants_timed)
    out += fmt::format("  gpu tuning: {} K3 kernels tuned ({} variants timed on the device in {:.1f} ms), {} as an earlier "
                       "run's tuning chose\n",
                       s.k3_tuned, s.variants_timed, s.tune_ms, s.k3_kept);
  out += fmt::format(
      "  gpu memory: {} inputs uploaded ({:.1f} MiB: their elements were on the host), {} inputs already on the device, "
      "{} outputs read back by the host ({:.1f} MiB); allocator high-water {:.1f} MiB, {} of {} blocks reused\n",
      s.uploads, static_cast<double>(s.upload_bytes) / (1 << 20), s.resident_inputs, s.downloads,
      static_cast<double>(s.download_bytes) / (1 << 20), static_cast<double>(s.memory.high_water_bytes) / (1 << 20),
      s.memory.reuses, s.memory.allocations);
  if (s.staging.pinned_bytes)
    out += fmt::format("  gpu copies: {} uploads and {} downloads ({:.1f} MiB) staged through {:.0f} MiB of pinned host memory\n",
                       s.staging.uploads, s.staging.downloads, static_cast<double>(s.staging.bytes) / (1 << 20),
                       static_cast<double>(s.staging.pinned_bytes) / (1 << 20));
  else if (!s.staging.unavailable.empty())
    out += "  gpu copies: not staged: " + s.staging.unavailable + "\n";
  return out;
}

}  // namespace tessera::device
