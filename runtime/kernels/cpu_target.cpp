#include "runtime/kernels/cpu_target.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

#include "codegen/kernel/cpu/cpu_launch.h"
#include "codegen/kernel/cpu/region_kernel.h"
#include "codegen/kernel/cuda/cuda_emitter.h"
#include "codegen/kernel/kernel_disk_cache.h"
#include "codegen/kernel/kernel_text.h"
#include "runtime/device/cuda_kernel_compiler.h"

namespace tessera::kernels {

namespace {

// A CPU kernel: the region compiled, with its launch's threads.
class CpuKernel : public TargetKernel {
 public:
  explicit CpuKernel(kir::CpuRegionKernel k) : kernel(std::move(k)) {}
  kir::CpuRegionKernel kernel;
};

// Inputs of the region's types at these symbols' values, every element 1
// (no denormals, NaNs or infinities to time instead of the kernel).
std::vector<Value> synthetic_inputs(const Region& r, const std::vector<int64_t>& sym) {
  std::vector<Value> in;
  for (const RegionType& t : r.inputs) {
    if (!t.tensor) {
      in.push_back(t.scalar == ScalarKind::Float ? Value::number(1.0)
                   : t.scalar == ScalarKind::Int ? Value::integer(1)
                                                 : Value::boolean(true));
      continue;
    }
    Shape shape;
    for (int d : t.dims) shape.push_back(d == kDimOne ? 1 : sym.at(static_cast<size_t>(d)));
    Value v = make_tensor(t.dtype, std::move(shape), false);
    TensorObj* tv = v.as_tensor();
    const int64_t n = tv->numel;
    for (int64_t i = 0; i < n; ++i) {
      switch (t.dtype) {
        case DType::F32: static_cast<float*>(tv->data())[i] = 1.0f; break;
        case DType::F16: static_cast<uint16_t*>(tv->data())[i] = 0x3C00; break;
        case DType::BF16: static_cast<uint16_t*>(tv->data())[i] = 0x3F80; break;
        case DType::I32: static_cast<int32_t*>(tv->data())[i] = 1; break;
        case DType::I64: static_cast<int64_t*>(tv->data())[i] = 1; break;
        case DType::Bool: static_cast<uint8_t*>(tv->data())[i] = 1; break;
      }
    }
    in.push_back(std::move(v));
  }
  return in;
}

// The thread split: the launcher runs a grid of fewer than
// kParallelMinPrograms programs on the calling thread, which is right for
// short programs; for each such layout with more than one program, every
// core is tried too.
void add_thread_splits(const Region& r, const std::vector<int64_t>& sym, std::vector<KernelVariant>& out) {
  const size_t layouts = out.size();
  for (size_t i = 0; i < layouts; ++i) {
    const std::vector<int64_t> g = kir::lower_region(r, "region", out[i].lowering({})).grid_extents(sym);
    const int64_t programs = g[0] * g[1] * g[2];
    if (programs > 1 && programs < kir::kParallelMinPrograms)
      out.push_back(KernelVariant{out[i].tile, kir::kEveryCore, out[i].flat});
  }
}

}  // namespace

kir::CpuKernelCompiler& CpuTarget::compiler() const {
  std::call_once(compiler_made_, [this] { compiler_ = std::make_unique<kir::CpuKernelCompiler>(); });
  return *compiler_;
}

std::string CpuTarget::arch() const { return "cpu " + compiler().host_identity(); }

std::vector<KernelVariant> CpuTarget::variants(const Region& r, const DimSpec&, const std::vector<int64_t>& sym) const {
  auto extent = [&](int d) { return d == kDimOne ? int64_t{1} : sym.at(static_cast<size_t>(d)); };
  // A row kernel's layout is fixed (a program per row, the row as one tile
  // when it is short enough): only the thread split to choose.
  if (r.has_row_ops()) {
    std::vector<KernelVariant> out = {KernelVariant{}};
    add_thread_splits(r, sym, out);
    return out;
  }
  const std::vector<int>& shape = r.type(r.outputs.at(0)).dims;
  int64_t total = 1;
  for (int d : shape) total *= extent(d);
  // lower_region's row-wise programs (rank >= 2): tiles of one row each.
  const bool rowwise = shape.size() >= 2 && shape.back() != kDimOne;
  const int64_t row = rowwise ? extent(shape.back()) : total;
  std::vector<KernelVariant> layouts;
  // A whole row per program (rounded up to 16 lanes), for rows of moderate
  // length; a row-wise tile longer than that would only compute masked-off lanes.
  const int64_t whole = (row + 15) / 16 * 16;
  for (int64_t tile : {int64_t{1024}, int64_t{4096}})
    if (!rowwise || tile <= whole) layouts.push_back(KernelVariant{tile, 0, false});
  if (rowwise && whole >= 16 && whole <= 16384 && whole != 1024 && whole != 4096)
    layouts.push_back(KernelVariant{whole, 0, false});
  // Short rows: tiles of the flattened output instead.
  if (rowwise && row < 1024)
    for (int64_t tile : {int64_t{1024}, int64_t{4096}}) layouts.push_back(KernelVariant{tile, 0, true});
  std::vector<KernelVariant> out = {KernelVariant{}};  // K2's
  for (const KernelVariant& l : layouts)
    if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
  add_thread_splits(r, sym, out);
  return out;
}

std::shared_ptr<const TargetKernel> CpuTarget::compile(const Region& r, const DimSpec& spec, const KernelVariant& v) {
  auto k = std::make_shared<const kir::Kernel>(kir::lower_region(r, "region", v.lowering(spec)));
  const std::string identity =
      std::string("emitter=") + kir::cpu_emitter_fingerprint() + " " + compiler().host_identity() + "\n" + print(*k);
  // The symbol: one name per identity (each object has a JITDylib of its
  // own, so equal names in two objects do not clash).
  const std::string symbol = "tessera_kernel_" + kir::KernelDiskCache::hash_hex(identity);
  std::string dump_dir;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dump_dir = dump_dir_;
  }
  std::string llvm_ir;
  KernelRecipe recipe;
  recipe.kind = "object";
  recipe.compile = [&] {
    kir::KernelObject o = compiler().compile_object(*k, symbol, !dump_dir.empty());
    llvm_ir = std::move(o.llvm_ir);
    return std::move(o.bytes);
  };
  recipe.load = [&](const std::string& image) -> std::shared_ptr<const void> {
    return std::make_shared<const kir::KernelFn>(compiler().load(image, symbol));
  };
  std::shared_ptr<const StoredKernel> stored = store_.get(name(), identity, "region", recipe);
  if (!dump_dir.empty() && !stored->dumped.exchange(true)) {
    if (llvm_ir.empty()) llvm_ir = compiler().llvm_ir(*k);
    dump(identity, *k, r, llvm_ir);
  }
  const kir::KernelFn fn = *static_cast<const kir::KernelFn*>(stored->loaded.get());
  auto out = std::make_shared<CpuKernel>(kir::CpuRegionKernel(r, std::move(k), fn, v.threads));
  out->spec = spec;
  out->variant = v;
  out->stored = std::move(stored);
  return out;
}

std::optional<Value> CpuTarget::launch(const Region&, const TargetKernel& k, std::span<const Value> inputs,
                                       const std::vector<int64_t>& sym, CallTuning*, std::string&) {
  return static_cast<const CpuKernel&>(k).kernel.run_bound(inputs, sym)[0];
}

std::function<double(const TargetKernel&)> CpuTarget::timer(const Region& r, const std::vector<int64_t>& sym) {
  auto in = std::make_shared<const std::vector<Value>>(synthetic_inputs(r, sym));
  auto warm = std::make_shared<std::set<const TargetKernel*>>();
  return [in, warm, sym](const TargetKernel& k) {
    const kir::CpuRegionKernel& kernel = static_cast<const CpuKernel&>(k).kernel;
    if (warm->insert(&k).second) kernel.run_bound(*in, sym);  // page faults of the outputs, caches
    const auto t0 = std::chrono::steady_clock::now();
    kernel.run_bound(*in, sym);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
}

void CpuTarget::set_dump_dir(std::string dir) {
  std::lock_guard<std::mutex> lock(mu_);
  dump_dir_ = std::move(dir);
}

std::string CpuTarget::dump_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dump_error_.error();
}

void CpuTarget::dump(const std::string& identity, const kir::Kernel& k, const Region& r, const std::string& llvm_ir) {
  std::lock_guard<std::mutex> lock(mu_);
  std::error_code ec;
  std::filesystem::create_directories(dump_dir_, ec);
  const std::string base = dump_dir_ + "/kernel-" + k.name + "-" + kir::KernelDiskCache::hash_hex(identity);
  std::string head;
  const std::string note = r.str();
  for (size_t pos = 0; pos < note.size();) {
    const size_t nl = note.find('\n', pos);
    head += "// " + note.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos) + "\n";
    pos = nl == std::string::npos ? note.size() : nl + 1;
  }
  dump_error_.write(base + ".kir", head + print(k));
  dump_error_.write(base + ".ll", llvm_ir);
  // The CUDA C++ the GPU target makes of the same kernel (every param a
  // pointer here; a GPU launch passes the region's script scalars by value),
  // and its PTX for the architecture family the GPU target builds for
  // (Hopper), where NVRTC is installed.
  try {
    const kir::CudaKernelSource cuda = kir::emit_cuda_kernel(k, "region");
    dump_error_.write(base + ".cu", head + cuda.source);
    const device::NvrtcLibrary& nvrtc = device::NvrtcLibrary::get();
    if (!nvrtc.available()) {
      dump_error_.write(base + ".ptx", "// no PTX: " + nvrtc.why_unavailable() + "\n");
    } else {
      const device::CudaCompiled ptx = device::CudaKernelCompiler(nvrtc).compile(cuda, "compute_90");
      dump_error_.write(base + ".ptx", ptx.ok ? ptx.ptx : "// NVRTC refused the kernel:\n" + ptx.log);
    }
  } catch (const std::exception& e) {
    dump_error_.write(base + ".cu", head + "// the CUDA emitter refused this kernel: " + e.what() + "\n");
  }
}

}  // namespace tessera::kernels
