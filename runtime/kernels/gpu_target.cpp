#include "runtime/kernels/gpu_target.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>

#include "codegen/kernel/cuda/cuda_region.h"
#include "codegen/kernel/kernel_events.h"
#include "codegen/kernel/lower_region.h"
#include "runtime/device/device_error.h"
#include "runtime/kernels/gemm_epilogue.h"
#include "vm/core/error.h"
#include "vm/core/nvtx_ranges.h"

namespace tessera::kernels {

using device::DeviceBlock;
using device::DevicePtr;

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

// A kernel of a region on the device: the region's kernel (after its
// leading step, if any) and attention's kernel for a leading attention,
// or attention's kernel alone where it computes the region
// (kir::attention_writes_outputs: `main`, and no `step`).
class GpuKernel : public TargetKernel {
 public:
  kir::Kernel main;  // the kernel that writes the region's outputs
  kir::CudaKernelSource main_src;
  std::shared_ptr<device::LaunchableKernel> main_built;
  std::optional<kir::Kernel> step;
  std::optional<kir::CudaKernelSource> step_src;
  std::shared_ptr<device::LaunchableKernel> step_built;
  GemmEpiloguePlan epilogue;  // a leading product's: what cuBLASLt computes of the rest
  std::string site_id, site;  // kir::region_report_id, and the timeline's name of the fused kernel
};

// Bytes of a region value's tensor for these symbols' values.
int64_t bytes_of(const RegionType& t, const std::vector<int64_t>& sym) {
  return numel_of(shape_of(t, sym)) * static_cast<int64_t>(dtype_size(t.dtype));
}

// What a call of `k` asks of each of its kernels (DeviceKernelProfile's
// roofline): the region's kernel reads the tensor inputs (and a leading
// step's result) and writes the outputs, one FLOP per operation and
// element; attention's kernel reads Q, K and V and writes its result, two
// products of Sq x Sk x (D + Dv) multiply-adds per head (the causal mask's
// skipped blocks not subtracted).
LaunchNote launch_note(const Region& r, const GpuKernel& k, std::span<const Value> inputs, const std::vector<int64_t>& sym,
                       bool tuning) {
  LaunchNote n;
  n.site_id = k.site_id;
  n.site = k.site;
  n.tier = k.tier();
  n.variant = k.variant.str();
  n.tuning = tuning;
  n.main = k.main_src.entry;
  int64_t in_bytes = 0, out_bytes = 0;
  for (const Value& v : inputs)
    if (v.is_tensor()) in_bytes += static_cast<int64_t>(v.as_tensor()->nbytes());
  for (int o : r.outputs) out_bytes += bytes_of(r.type(o), sym);
  const bool lead = r.leading_step();
  if (lead && r.ops.front().op == OpId::Attention) {
    const RegionOp& a = r.ops.front();
    const Shape q = shape_of(r.type(a.args[0]), sym), kk = shape_of(r.type(a.args[1]), sym),
                v = shape_of(r.type(a.args[2]), sym);
    LaunchNote::Work w;
    if (q.size() >= 2 && kk.size() >= 2 && v.size() >= 2) {
      const int64_t sq = q[q.size() - 2], d = q.back(), sk = kk[kk.size() - 2], dv = v.back();
      const int64_t heads = sq && d ? numel_of(q) / (sq * d) : 0;
      w.flops = 2 * heads * sq * sk * (d + dv);
    }
    w.bytes = bytes_of(r.type(a.args[0]), sym) + bytes_of(r.type(a.args[1]), sym) + bytes_of(r.type(a.args[2]), sym) +
              (k.step ? bytes_of(a.type, sym) : out_bytes);
    w.tensor_cores = kir::attention_on_tensor_cores(r);
    n.work[k.step ? k.step_src->entry : k.main_src.entry] = w;
    if (!k.step) return n;
  }
  LaunchNote::Work w;
  w.bytes = in_bytes + out_bytes + (lead ? bytes_of(r.ops.front().type, sym) : 0);
  int64_t elements = 0;
  for (int o : r.outputs) elements = std::max(elements, numel_of(shape_of(r.type(o), sym)));
  w.flops = elements * static_cast<int64_t>(r.ops.size() - (lead ? 1 : 0));
  n.work[k.main_src.entry] = w;
  return n;
}

// The calls' (or a timing's) kernels carry their note's id until the scope ends.
class ProfileScope {
 public:
  ProfileScope(DeviceKernelProfile& p, LaunchNote note) : p_(p), id_(p.active() ? p.begin(std::move(note)) : 0) {}
  ~ProfileScope() {
    if (id_) p_.end();
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;
  uint64_t id() const { return id_; }

 private:
  DeviceKernelProfile& p_;
  uint64_t id_;
};

// A leading matrix product of these symbols' values as cuBLASLt's call
// (its result in `c`, stride m n), or a DeviceError for what is not built.
device::GemmDesc product_desc(const Region& r, const std::vector<int64_t>& sym, const std::vector<void*>& ptrs, DevicePtr c) {
  const RegionOp& lead = r.ops.front();
  const Shape a = shape_of(r.type(lead.args[0]), sym), b = shape_of(r.type(lead.args[1]), sym);
  if (a.size() < 2 || b.size() < 2 || a.size() > 3 || b.size() > 3)
    throw device::DeviceError("a matrix product of vectors or of rank over 3 on the GPU is not built");
  device::GemmDesc d;
  d.m = a[a.size() - 2], d.k = a.back(), d.n = b.back();
  d.batch = a.size() == 3 ? a[0] : 1;
  if (b.size() == 3 && b[0] != d.batch)
    throw device::DeviceError("a batched product whose batches differ on the GPU is not built");
  d.dtype = lead.type.dtype;  // the operands' too (GpuTarget::refuses)
  auto dptr = [&](int arg) { return reinterpret_cast<DevicePtr>(ptrs[static_cast<size_t>(r.index_of(arg))]); };
  d.a = dptr(lead.args[0]);
  d.b = dptr(lead.args[1]);
  d.c = c;
  d.stride_a = d.m * d.k;
  d.stride_b = b.size() == 3 ? d.k * d.n : 0;
  d.stride_c = d.m * d.n;
  return d;
}

}  // namespace

// A tensor's elements in one of the device's blocks: a kernel output's,
// left there until the host reads them, or a mirror of a host tensor a
// kernel read (host_current), kept until the host touches it. The
// collectives' device transport reads and writes such blocks on a stream
// of its own (device_copy.h, used_until): the kernels' stream waits for its
// event before the block's next reader, the host's read, or the block's
// reuse once freed, and not before (so that independent kernels overlap
// the collective).
class GpuBlockCopy : public DeviceCopy {
 public:
  GpuBlockCopy(std::shared_ptr<GpuTarget> owner, DevicePtr block, bool host_current)
      : owner_(std::move(owner)), block_(block), host_current_(host_current) {}
  ~GpuBlockCopy() override {
    try {
      order_kernels_after();  // the next user of the block is enqueued on the kernels' stream
    } catch (const std::exception&) {
      // a device that fails here fails its next operation too
    }
    owner_->backend().allocator().free(block_);
  }
  // A device that fails here (a lost GPU, a kernel that faulted) fails the
  // script's operation that needed the elements, as a runtime error.
  void to_host(void* host, size_t bytes) override {
    if (host_current_) return;  // another stream may still read the block: the host reads its own buffer
    const nvtx::Range copy(nvtx::Phase::Copy);
    try {
      order_kernels_after();
      owner_->backend().download(host, block_, bytes);
    } catch (const device::DeviceFault& e) {
      throw FatalRuntimeError(owner_->fault_message("the GPU could not give back a tensor's elements", e.what()));
    } catch (const device::DeviceError& e) {
      throw RuntimeError(std::string("the GPU could not give back a tensor's elements: ") + e.what());
    }
    owner_->note_download(bytes);
    owner_->profile().flush(true);  // a sync point: the kernels before it have their records
  }
  const GpuTarget* owner() const { return owner_.get(); }
  DevicePtr block() const { return block_; }
  device::DeviceBackend* device() const override { return &owner_->backend(); }
  void* device_pointer() const override { return reinterpret_cast<void*>(block_); }
  std::unique_ptr<DeviceCopy> new_block(size_t bytes) const override {
    device::DeviceBlock b(owner_->backend().allocator(), bytes);
    return std::make_unique<GpuBlockCopy>(owner_, b.release(), false);
  }
  void used_until(std::shared_ptr<void> event) const override { busy_ = std::move(event); }
  // Before the kernels' stream next uses the block: it waits for the work
  // on another stream that uses it (once).
  void order_kernels_after() const {
    if (!busy_) return;
    owner_->backend().stream_wait(nullptr, busy_.get());
    busy_.reset();
  }

 private:
  std::shared_ptr<GpuTarget> owner_;  // keeps the device (and its memory) alive
  DevicePtr block_;
  bool host_current_;
  mutable std::shared_ptr<void> busy_;  // an event after another stream's use of the block
};

GpuTarget::GpuTarget(std::shared_ptr<device::DeviceBackend> backend, KernelStore& store, Options options)
    : backend_(std::move(backend)), store_(store), opt_(options) {
  std::string why = "the JIT parameter cupti=0";
  device::KernelActivity* activity = opt_.cupti ? device::kernel_activity(*backend_, why) : nullptr;
  profile_ = std::make_unique<DeviceKernelProfile>(activity, why, backend_->limits());
  // Metrics are shown on the kernels' lines, which come from the records.
  if (opt_.kprofile && profile_->active()) metrics_ = device::kernel_metrics(*backend_, metrics_why_);
  else if (opt_.kprofile) metrics_why_ = "no kernel records to show them with: " + profile_->why_not();
}

std::string GpuTarget::refuses(const Region& r) const {
  const RegionOp* lead = r.leading_step() ? &r.ops.front() : nullptr;
  // cuBLASLt multiplies operands of one type, f32, f16 or bf16, into that
  // type; the interpreter promotes mixed operands (f16 by f32 gives f32).
  // The emulation (whose products are the interpreter's) refuses what a GPU
  // refuses, so that its tests see the device's behaviour.
  if (lead && lead->op == OpId::MatMul) {
    const DType a = r.type(lead->args[0]).dtype, b = r.type(lead->args[1]).dtype;
    if (a != b)
      return fmt::format("a matrix product of {} by {} on the GPU is not built (cuBLASLt takes operands of one type: "
                         "cast one to the other's dtype first)",
                         dtype_name(a), dtype_name(b));
    if (a != DType::F32 && a != DType::F16 && a != DType::BF16)
      return fmt::format("a matrix product of {} on the GPU is not built (f32, f16 and bf16 run on cuBLASLt)",
                         dtype_name(a));
  }
  return {};
}

std::vector<KernelVariant> gpu_variants(const Region& r, const DimSpec& spec, bool warpgroup_products) {
  std::vector<KernelVariant> v;
  if (r.leading_step() && r.ops.front().op == OpId::Attention) {
    // The attention kernel's rows per block and threads; the region's
    // epilogue kernel keeps K2's tile. A variant the emitter refuses (a
    // thread would hold more than 64 elements of a tile) is skipped.
    const kir::AttentionTiles t = kir::attention_tiles(r, KernelVariant{}.lowering(spec));  // by dtype and dims
    // Variants that ptxas compiles without spills (cuda_kernel_nvrtc_test):
    // f32 attention holds its blocks of Q, K and V in registers, and has one.
    if (!kir::attention_on_tensor_cores(r)) return {KernelVariant{1024, 256, false, t.rows}};
    // Twice the rows only with 256 threads: with 128, a thread's share of
    // the scores and the accumulator spills.
    v = {KernelVariant{1024, 128, false, t.rows}, KernelVariant{1024, 256, false, t.rows},
         KernelVariant{1024, 256, false, 2 * t.rows}};
    // wgmma: a warpgroup's 64 rows, two warpgroups sharing each product's
    // columns, and a producer warpgroup copying the keys and values
    // (cuda_emitter_producer.cpp). One consumer warpgroup's share of 64
    // rows spills, as 64 rows in 128 threads do on mma.sync.
    if (warpgroup_products && std::max(t.head, t.value) <= 128) v.push_back(KernelVariant{1024, 256, false, 64, true});
    return v;
  }
  const bool rows = !r.row_dims().empty();
  size_t rank = 0;
  for (int o : r.outputs) rank = std::max(rank, r.type(o).dims.size());
  for (int64_t tile : {256, 512, 1024, 2048, 4096}) {
    if (rows && tile != 1024) continue;
    for (int threads : {128, 256}) {
      if (threads > tile) continue;
      v.push_back({tile, threads, false});
      if (!rows && rank > 1) v.push_back({tile, threads, true});
    }
  }
  return v;
}

std::vector<KernelVariant> GpuTarget::variants(const Region& r, const DimSpec& spec, const std::vector<int64_t>&) const {
  std::vector<KernelVariant> v = gpu_variants(r, spec, backend_->warpgroup_products());
  if (plan_gemm_epilogue(r)) v.resize(1);
  return v;
}

std::shared_ptr<const TargetKernel> GpuTarget::compile(const Region& r, const DimSpec& spec, const KernelVariant& v) {
  auto k = std::make_shared<GpuKernel>();
  k->spec = spec;
  k->variant = v;
  const kir::RegionLowering opt = v.lowering(spec);
  const int threads = spec.empty() ? 0 : v.threads;  // 0: from the kernel's tile (K2, untuned K3)
  const bool attention = r.leading_step() && r.ops.front().op == OpId::Attention;
  if (attention) {
    kir::Kernel a = kir::lower_attention(r, "attention", opt, kir::attention_tiles(r, opt, v.rows));
    kir::CudaTarget target = kir::cuda_target_for(r, threads);
    target.wgmma = v.wgmma;
    kir::CudaKernelSource src = kir::emit_cuda_kernel(a, "tsr_attention", target);
    if (kir::attention_writes_outputs(r)) {
      k->main = std::move(a);
      k->main_src = std::move(src);
    } else {
      k->step = std::move(a);
      k->step_src = std::move(src);
    }
  }
  if (!attention || k->step) {
    k->main = kir::lower_region(r, "region", opt);
    k->main_src = kir::emit_cuda_kernel(k->main, "tsr_region", kir::cuda_target_for(r, attention ? 0 : threads));
  }
  // The region's kernel is built even when cuBLASLt computes its epilogue:
  // a product with an empty inner dim still needs it (gemm_epilogue.h).
  k->epilogue = plan_gemm_epilogue(r);
  k->site_id = kir::region_report_id(r);
  k->site = "gpu " + k->site_id + " (" + kir::region_ops_text(r) + ")";
  // Built through the store (its image cached on disk), then loaded for this device.
  auto build = [&](const kir::CudaKernelSource& src) {
    KernelRecipe recipe;
    recipe.kind = backend_->image_kind();
    recipe.compile = [&] { return backend_->compile(src); };
    std::shared_ptr<const StoredKernel> stored = store_.get(name(), backend_->image_identity(src), "cuda", recipe);
    return std::make_pair(backend_->load(src, stored->image), stored);
  };
  std::tie(k->main_built, k->stored) = build(k->main_src);
  if (k->step_src) k->step_built = build(*k->step_src).first;
  return k;
}

std::function<double(const TargetKernel&)> GpuTarget::timer(const Region&, const std::vector<int64_t>&) {
  // A GPU times its variants at a call (times_at_call), on the call's buffers.
  return [](const TargetKernel&) -> double { throw std::logic_error("the GPU times its variants at a call"); };
}

std::optional<Value> GpuTarget::launch(const Region& r, const TargetKernel& kernel, std::span<const Value> inputs,
                                       const std::vector<int64_t>& sym, CallTuning* tuning, std::string& why) {
  const GpuKernel* v = static_cast<const GpuKernel*>(&kernel);
  device::DeviceAllocator& alloc = backend_->allocator();
  std::optional<ProfileScope> call_scope;
  if (profile_->active() && !tuning) call_scope.emplace(*profile_, launch_note(r, *v, inputs, sym, false));
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
    // Blocks of this call, freed when it fails: the leading step's result
    // (freed after the launch, stream-ordered), the outputs' (theirs once
    // the launch is made), and host tensors uploaded for the call (which
    // keep their block as a mirror once the launch is made).
    std::vector<DeviceBlock> temps, out_blocks;
    std::vector<std::pair<TensorObj*, DeviceBlock>> mirrors;
    uint64_t up = 0, up_bytes = 0, resident = 0;
    for (size_t i = 0; i < n_in; ++i) {
      const Value& in = inputs[i];
      if (!in.is_tensor()) {
        if (in.is_float()) scalars[i].f = static_cast<float>(in.as_float());
        else if (in.is_int()) scalars[i].i = in.as_int();
        else scalars[i].b = in.as_bool() ? 1 : 0;
        params.push_back(&scalars[i]);
        continue;
      }
      const TensorObj& t = *in.as_tensor();
      auto* held = dynamic_cast<const GpuBlockCopy*>(t.device_copy);
      auto same = std::find_if(mirrors.begin(), mirrors.end(), [&](const auto& m) { return m.first == &t; });
      if (held && held->owner() == this) {
        held->order_kernels_after();
        ptrs[i] = reinterpret_cast<void*>(held->block());
        ++resident;
      } else if (same != mirrors.end()) {
        ptrs[i] = reinterpret_cast<void*>(same->second.get());  // an input passed twice: uploaded once
      } else {
        const nvtx::Range copy(nvtx::Phase::Copy);
        const void* host = t.data();  // another device's copy comes back first
        DeviceBlock b(alloc, t.nbytes());
        backend_->upload(b.get(), host, t.nbytes());
        ptrs[i] = reinterpret_cast<void*>(b.get());
        // The elements do not change: only who holds them.
        mirrors.emplace_back(const_cast<TensorObj*>(&t), std::move(b));
        ++up;
        up_bytes += t.nbytes();
      }
      params.push_back(&ptrs[i]);
    }
    // The leading step's result, which the region's kernel reads after the
    // inputs; or, where cuBLASLt computes the region's bias and relu with
    // the product (gemm_epilogue.h), the region's output, and its kernel
    // does not run (`whole`).
    std::optional<device::GemmDesc> whole;
    bool whole_on_host = false;  // the emulation: the region by the interpreter's kernels
    // A leading attention whose kernel computes the region (compile() gave
    // it no step kernel) has no step result.
    const bool attention_alone = r.leading_step() && r.ops.front().op == OpId::Attention && !v->step;
    if (r.leading_step() && !attention_alone) {
      const RegionOp& lead = r.ops.front();
      const Shape shape = shape_of(lead.type, sym);
      const size_t bytes = static_cast<size_t>(numel_of(shape)) * dtype_size(lead.type.dtype);
      std::optional<device::GemmDesc> gemm;
      if (lead.op == OpId::MatMul && !backend_->host_memory()) {
        gemm = product_desc(r, sym, ptrs, 0);
        gemm->tf32 = opt_.tf32;
        // cuBLASLt takes no empty inner dim: then zeros, and the region's kernel.
        if (v->epilogue && gemm->k > 0) {
          gemm->epilogue = v->epilogue.epilogue;
          gemm->bias = reinterpret_cast<DevicePtr>(ptrs[v->epilogue.bias_input]);
          whole = gemm;
        }
      }
      whole_on_host = lead.op == OpId::MatMul && backend_->host_memory() && v->epilogue;
      const DevicePtr p = whole || whole_on_host ? 0 : temps.emplace_back(alloc, bytes).get();
      ptrs[n_in] = reinterpret_cast<void*>(p);
      if (lead.op == OpId::Attention) {
        // Launched with the kernel that runs the call (after tuning chooses one).
      } else if (whole || whole_on_host) {
        // Computed below, into the output's block.
      } else if (backend_->host_memory()) {
        const nvtx::Range mma(nvtx::Phase::Mma);
        // The emulation: the product by the interpreter's kernel, in place.
        const Value product = run_leading_step(r, inputs);
        backend_->upload(p, product.as_tensor()->data(), bytes);
      } else {
        gemm->c = p;
        const nvtx::Range mma(nvtx::Phase::Mma);
        backend_->matmul(*gemm);
      }
      params.push_back(&ptrs[n_in]);
    }
    // A leading attention's kernel, writing the step's result.
    const size_t step_args = params.size();
    auto run_step = [&](const GpuKernel& c) {
      if (!c.step) return;
      const nvtx::Range mma(nvtx::Phase::Mma);
      std::vector<void*> step_params(params.begin(), params.begin() + static_cast<std::ptrdiff_t>(step_args));
      const std::vector<int64_t> grid = c.step->grid_extents(sym);
      std::vector<kir::TensorMapBytes> maps;
      std::vector<void*> args = c.step_built->arguments(step_params, sym, grid, maps);
      note_launch(*c.step_src, grid, c);
      c.step_built->launch(grid[0] * grid[1] * grid[2], args);
    };
    std::vector<Value> outs;
    for (size_t o = 0; o < r.outputs.size(); ++o) {
      const RegionType& t = r.type(r.outputs[o]);
      outs.push_back(make_tensor(t.dtype, shape_of(t, sym), false));
      ptrs[n_in + 1 + o] = reinterpret_cast<void*>(out_blocks.emplace_back(alloc, outs.back().as_tensor()->nbytes()).get());
      params.push_back(&ptrs[n_in + 1 + o]);
    }
    const bool in_product = whole || whole_on_host;
    if (in_product) {
      const nvtx::Range mma(nvtx::Phase::Mma);
      if (whole) {
        whole->c = reinterpret_cast<DevicePtr>(ptrs[n_in + 1]);
        backend_->matmul(*whole);
      } else {
        // The emulation stands in for cuBLASLt's epilogue with the
        // interpreter's kernels: the interpreter's results, and the GPU's
        // path (no region kernel, nothing to tune) tested.
        const Value out = run_region_reference(r, inputs).at(0);
        backend_->upload(reinterpret_cast<DevicePtr>(ptrs[n_in + 1]), out.as_tensor()->data(), out.as_tensor()->nbytes());
      }
      if (tuning) {  // the region's kernel does not run: its one variant (variants()) is kept untimed
        tuning->outcome = TuneOutcome{tuning->candidates.front()->variant, {}, {}};
        tuning->best = 0;
      }
    }
    // Variants being tuned: each timed on this call's buffers (after a
    // launch that loads its module), the fastest runs the call. A variant
    // of an attention region is timed with its attention kernel.
    if (tuning && !in_product) {
      const auto start = std::chrono::steady_clock::now();
      std::vector<KernelVariant> variants;
      for (const TargetKernel* c : tuning->candidates) variants.push_back(c->variant);
      constexpr int kLaunches = 3;
      tuning->outcome = KernelTuner::fastest(
          variants,
          [&](size_t i) {
            const GpuKernel& c = static_cast<const GpuKernel&>(*tuning->candidates[i]);
            const std::vector<int64_t> grid = c.main.grid_extents(sym);
            std::vector<kir::TensorMapBytes> maps;
            std::vector<void*> args = c.main_built->arguments(params, sym, grid, maps);
            auto once = [&] {
              run_step(c);
              note_launch(c.main_src, grid, c);
              c.main_built->launch(grid[0] * grid[1] * grid[2], args);
            };
            {
              ProfileScope load(*profile_, launch_note(r, c, inputs, sym, true));  // not timed
              once();
            }
            measure_metrics(r, c, inputs, sym, [&] {  // not timed either: replayed for the metrics' passes
              note_launch(c.main_src, grid, c);
              c.main_built->launch(grid[0] * grid[1] * grid[2], args);
            });
            ProfileScope timed(*profile_, launch_note(r, c, inputs, sym, true));
            const double by_events = backend_->time_ms([&] {
                                       for (int n = 0; n < kLaunches; ++n) once();
                                     }) / kLaunches;
            if (timed.id()) {
              profile_->flush(true);  // time_ms waited for the device
              if (const double ms = profile_->ms_of(timed.id()); ms > 0) {
                std::lock_guard<std::mutex> lock(mu_);
                ++tuned_by_cupti_;
                return ms / kLaunches;  // CUPTI's kernel time: no launch or event overhead in it
              }
            }
            std::lock_guard<std::mutex> lock(mu_);
            ++tuned_by_events_;
            return by_events;
          },
          timing_plan());
      for (size_t i = 0; i < tuning->candidates.size(); ++i)
        if (tuning->candidates[i]->variant == tuning->outcome->best) {
          tuning->best = i;
          v = static_cast<const GpuKernel*>(tuning->candidates[i]);
          break;
        }
      tuning->ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
    if (profile_->active() && !call_scope) call_scope.emplace(*profile_, launch_note(r, *v, inputs, sym, false));
    const std::vector<int64_t> grid = v->main.grid_extents(sym);
    std::vector<kir::TensorMapBytes> maps;
    std::vector<void*> args = v->main_built->arguments(params, sym, grid, maps);
    int64_t moved = 0;  // what the kernel reads and writes (its tensor inputs and outputs), for the timeline's GB/s
    for (const Value& in : inputs)
      if (in.is_tensor()) moved += static_cast<int64_t>(in.as_tensor()->nbytes());
    for (const Value& o : outs) moved += static_cast<int64_t>(o.as_tensor()->nbytes());
    run_step(*v);
    if (!in_product) {
      // A kernel's first call: measured in a launch of its own before the
      // call's (whose records and time stay the call's).
      measure_metrics(r, *v, inputs, sym, [&] {
        note_launch(v->main_src, grid, *v);
        v->main_built->launch(grid[0] * grid[1] * grid[2], args);
      });
      launch_timed(r, *v, grid, args, moved);
    }
    for (size_t o = 0; o < outs.size(); ++o)
      outs[o].as_tensor()->attach_device_copy(
          std::make_unique<GpuBlockCopy>(shared_from_this(), out_blocks[o].release(), false));
    for (auto& [t, b] : mirrors) t->attach_device_copy(std::make_unique<GpuBlockCopy>(shared_from_this(), b.release(), true));
    std::lock_guard<std::mutex> lock(mu_);
    traffic_.uploads += up;
    traffic_.upload_bytes += up_bytes;
    traffic_.resident_inputs += resident;
    if (in_product) ++traffic_.product_epilogues;
    if (attention_alone) ++traffic_.attention_epilogues;
    return outs.at(0);
  } catch (const device::DeviceFault& e) {
    // The device's context is lost: no CPU fallback hides it.
    GpuCrashReport c = crash_report(e.what());
    c.region = &r;
    if (v->step) c.kernels.push_back({"attention", &*v->step, &*v->step_src, v->step->grid_extents(sym)});
    c.kernels.push_back({v->step || !r.leading_step() || r.ops.front().op != OpId::Attention ? "region" : "attention",
                         &v->main, &v->main_src, v->main.grid_extents(sym)});
    c.variant = v->variant.str();
    c.tier = v->tier();
    c.dims = sym;
    for (const Value& in : inputs)
      c.inputs.push_back(in.is_tensor() ? std::string(dtype_name(in.as_tensor()->dtype)) + " " + shape_str(in.as_tensor()->shape)
                                        : std::string("scalar"));
    throw FatalRuntimeError(gpu_crash_message("a kernel of a fused call faulted on the GPU", c));
  } catch (const device::DeviceOutOfMemory&) {
    throw RuntimeError("out of memory");  // the script's error, as for the host's memory
  } catch (const device::DeviceError& e) {
    why = e.what();
    return std::nullopt;
  } catch (const std::runtime_error& e) {
    if (!tuning || tuning->outcome) throw;
    why = e.what();  // no variant of the tuning could run
    return std::nullopt;
  }
}

// Launches the region's kernel; when the event log keeps a timeline, the
// launch is timed on the device (CUDA events; the emulation's clock) and
// reported as a span on the GPU's track, ending when the device finished.
// That waits for the device, so it happens only for --dump and --metrics.
void GpuTarget::launch_timed(const Region& r, const TargetKernel& k, const std::vector<int64_t>& grid,
                             std::vector<void*>& args, int64_t bytes) {
  std::shared_ptr<jit::JitEventLog> e;
  {
    std::lock_guard<std::mutex> lock(mu_);
    e = events_;
  }
  const GpuKernel& g = static_cast<const GpuKernel&>(k);
  // Nsight: attention's kernel computing the region alone is `mma`, a kernel with row reductions `reduce`.
  const bool attention = !g.step && r.leading_step() && r.ops.front().op == OpId::Attention;
  const nvtx::Range phase(attention ? nvtx::Phase::Mma : nvtx::Phase::Reduce, attention || r.has_row_ops());
  note_launch(g.main_src, grid, k);
  auto launch = [&] { g.main_built->launch(grid[0] * grid[1] * grid[2], args); };
  // With CUPTI the device's own spans come with its records (finish_profile).
  if (!e || !e->wants_spans() || profile_->active()) {
    launch();
    return;
  }
  const double ms = backend_->time_ms(launch);
  const double end = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
  kir::KernelSpan span;
  span.start_ms = end - ms;
  span.end_ms = end;
  span.gpu = span.on_device = true;
  span.tier = k.tier();
  span.blocks = grid[0] * grid[1] * grid[2];
  span.bytes = bytes;
  e->kernel_span(g.site, span);
}

void GpuTarget::measure_metrics(const Region& r, const TargetKernel& kernel, std::span<const Value> inputs,
                                const std::vector<int64_t>& sym, const std::function<void()>& launch) {
  if (!metrics_) return;
  const GpuKernel& k = static_cast<const GpuKernel&>(kernel);
  const std::string variant = k.variant.str();
  if (!measured_.emplace(k.site, k.main_src.entry, variant).second) return;
  ProfileScope scope(*profile_, launch_note(r, k, inputs, sym, true));  // its records are no call's
  std::string why;
  const std::optional<device::KernelMetricFigures> f = metrics_->measure(launch, why);
  std::lock_guard<std::mutex> lock(mu_);
  if (!f) {
    ++metrics_failed_;
    if (metrics_why_.empty()) metrics_why_ = why;
    return;
  }
  ++metrics_taken_;
  profile_->set_metrics(k.site, k.main_src.entry, variant,
                        KernelMetricValues{f->dram_pct, f->occupancy_pct, f->tensor_pct, f->passes});
}

void GpuTarget::note_launch(const kir::CudaKernelSource& src, const std::vector<int64_t>& grid, const TargetKernel& k) {
  std::string line = fmt::format("{} {} {}: {} blocks ({}) of {} threads, {} bytes of shared memory", src.entry, k.tier(),
                                 k.variant.str(), grid[0] * grid[1] * grid[2], fmt::join(grid, "x"), src.threads,
                                 src.shared_bytes);
  std::lock_guard<std::mutex> lock(mu_);
  recent_.add(std::move(line));
}

GpuCrashReport GpuTarget::crash_report(const std::string& error) const {
  GpuCrashReport c;
  c.error = error;
  c.device = backend_->describe();
  std::lock_guard<std::mutex> lock(mu_);
  c.recent = recent_.lines();
  if (recent_events_) c.events = recent_events_->lines();
  return c;
}

void GpuTarget::set_recent_events(std::shared_ptr<const RecentEvents> e) {
  std::lock_guard<std::mutex> lock(mu_);
  recent_events_ = std::move(e);
}

std::string GpuTarget::fault_message(const std::string& what, const std::string& error) const {
  return gpu_crash_message(what, crash_report(error));
}

void GpuTarget::set_events(std::shared_ptr<jit::JitEventLog> e) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_ = e;
  }
  if (!e || !e->wants_spans()) return;
  // The GPU track: each kernel's span as the device ran it. The fused
  // kernel's own kernel is named as the timeline names the site; another
  // of its call (attention's, cuBLASLt's) adds its entry; a variant being
  // timed says so.
  profile_->set_span_sink([e](const std::string& site, const device::DeviceKernelRecord& rec, const LaunchNote& n) {
    kir::KernelSpan span;
    span.start_ms = rec.start_ms;
    span.end_ms = rec.end_ms;
    span.gpu = span.on_device = true;
    span.tier = n.tier;
    span.blocks = rec.blocks();
    std::string name = site;
    auto w = n.work.find(rec.name);
    if (w != n.work.end()) {
      span.bytes = w->second.bytes;
      span.flops = w->second.flops;
    }
    if (rec.name != n.main) name += ": " + rec.name;
    if (n.tuning) name += " [tuning " + n.variant + "]";
    e->kernel_span(name, span);
  });
}

void GpuTarget::finish_profile() {
  if (!profile_->active()) return;
  try {
    backend_->synchronize();
  } catch (const device::DeviceError&) {
    return;  // a faulted device has no more records to give
  }
  profile_->flush(true);
}

std::optional<double> GpuTarget::site_device_ms(const std::string& site_id) {
  if (!profile_->active()) return std::nullopt;
  // Records complete so far, taken at most once a millisecond: the K3
  // decision asks at calls, and a flush per launch is what CUPTI's
  // buffers exist to avoid.
  const double now = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
  bool take = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (now - last_site_flush_ms_ >= 1.0) take = true, last_site_flush_ms_ = now;
  }
  if (take) profile_->flush(false);
  return profile_->site_ms(site_id);
}

void GpuTarget::note_download(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  ++traffic_.downloads;
  traffic_.download_bytes += bytes;
}

GpuTarget::Traffic GpuTarget::traffic() const {
  std::lock_guard<std::mutex> lock(mu_);
  return traffic_;
}

std::string GpuTarget::report(const KernelRuntime& runtime) const {
  const TargetCounters& c = runtime.counters(name());
  const Traffic t = traffic();
  const KernelStore::TargetStats b = store_.stats(name());
  double build_ms = b.load_ms;
  for (double ms : b.compile_ms) build_ms += ms;
  const std::string first = runtime.first_failure(name());
  const device::DeviceAllocator::Stats memory = backend_->allocator().stats();
  const device::PinnedStaging::Stats staging = backend_->staging();
  const uint64_t k2 = c.k2_runs.load(), k3 = c.k3_runs.load();
  std::string out = fmt::format(
      "  gpu: {} fused calls on the device at {} sites (K2 {}, K3 {}; {} on the CPU while their kernel was built, {} "
      "refused{}); {} kernels built by {} in {:.1f} ms, {} from the kernel cache\n",
      k2 + k3, c.sites.load(), k2, k3, c.while_building.load(), c.refused.load(),
      first.empty() ? "" : ", the first because: " + first.substr(0, first.find('\n')), b.compiled,
      backend_->compiler(), build_ms, b.from_disk);
  if (c.k3_tuned || c.k3_kept || c.variants_timed)
    out += fmt::format("  gpu tuning: {} K3 kernels tuned ({} variants timed on the device in {:.1f} ms), {} as an earlier "
                       "run's tuning chose\n",
                       c.k3_tuned.load(), c.variants_timed.load(), static_cast<double>(c.tune_us.load()) / 1000.0,
                       c.k3_kept.load());
  if (c.promoted_by_time)
    out += fmt::format("  gpu K3 by time: {} K3 kernels asked for before `specialize` calls, their calls having spent the "
                       "k3time on the device (CUPTI's records)\n",
                       c.promoted_by_time.load());
  out += fmt::format(
      "  gpu memory: {} inputs uploaded ({:.1f} MiB: their elements were on the host), {} inputs already on the device, "
      "{} outputs read back by the host ({:.1f} MiB); allocator high-water {:.1f} MiB, {} of {} blocks reused\n",
      t.uploads, static_cast<double>(t.upload_bytes) / (1 << 20), t.resident_inputs, t.downloads,
      static_cast<double>(t.download_bytes) / (1 << 20), static_cast<double>(memory.high_water_bytes) / (1 << 20),
      memory.reuses, memory.allocations);
  if (t.product_epilogues)
    out += fmt::format("  gpu products: {} calls' bias (and relu) computed with their matrix product (cuBLASLt's epilogue), "
                       "no kernel of theirs launched\n",
                       t.product_epilogues);
  if (t.attention_epilogues)
    out += fmt::format("  gpu attention: {} calls computed by their attention kernel alone (the consumers of attention's "
                       "result fused into its write)\n",
                       t.attention_epilogues);
  if (staging.pinned_bytes)
    out += fmt::format("  gpu copies: {} uploads and {} downloads ({:.1f} MiB) staged through {:.0f} MiB of pinned host memory\n",
                       staging.uploads, staging.downloads, static_cast<double>(staging.bytes) / (1 << 20),
                       static_cast<double>(staging.pinned_bytes) / (1 << 20));
  else if (!staging.unavailable.empty())
    out += "  gpu copies: not staged: " + staging.unavailable + "\n";
  return out + profile_report();
}


}  // namespace tessera::kernels
