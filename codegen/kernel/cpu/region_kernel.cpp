#include "codegen/kernel/cpu/region_kernel.h"

#include "codegen/kernel/cpu/cpu_launch.h"
#include "codegen/kernel/cpu/emitter_fingerprint.h"

namespace tessera::kir {

const char* cpu_emitter_fingerprint() { return TESSERA_CPU_EMITTER_FINGERPRINT; }

CpuRegionKernel::CpuRegionKernel(Region r, CpuKernelCompiler& compiler, const RegionLowering& opt)
    : region_(std::move(r)), kernel_(std::make_shared<const Kernel>(lower_region(region_, "region", opt))) {
  CompiledKernel c = compiler.compile(*kernel_);
  fn_ = c.fn;
  compile_ms_ = c.compile_ms;
}

CpuRegionKernel::CpuRegionKernel(Region r, std::shared_ptr<const Kernel> k, KernelFn fn, int threads)
    : region_(std::move(r)), kernel_(std::move(k)), fn_(fn), threads_(threads) {}

bool CpuRegionKernel::fits(const std::vector<int64_t>& symbols) const {
  for (size_t s = 0; s < kernel_->dim_values.size() && s < symbols.size(); ++s)
    if (kernel_->dim_values[s] && *kernel_->dim_values[s] != symbols[s]) return false;
  return true;
}

std::optional<std::vector<Value>> CpuRegionKernel::run(std::span<const Value> inputs,
                                                       std::optional<int> threads) const {
  std::optional<std::vector<int64_t>> sym = bind_symbols(region_, inputs);
  if (!sym || !fits(*sym)) return std::nullopt;
  return run_bound(inputs, *sym, threads);
}

std::vector<Value> CpuRegionKernel::run_bound(std::span<const Value> inputs, const std::vector<int64_t>& sym,
                                              std::optional<int> threads) const {
  // Scalars are passed by address, in the param's element type.
  union Scalar {
    float f;
    int64_t i;
    uint8_t b;
  };
  std::vector<Scalar> scalars(inputs.size());
  std::vector<void*> params;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = inputs[i];
    if (v.is_tensor()) {
      params.push_back(v.as_tensor()->data());
      continue;
    }
    if (v.is_float()) scalars[i].f = static_cast<float>(v.as_float());  // rounded as the interpreter's f32 path
    else if (v.is_int()) scalars[i].i = v.as_int();
    else scalars[i].b = v.as_bool() ? 1 : 0;
    params.push_back(&scalars[i]);
  }
  // The leading step by the interpreter's kernel (a matrix product by
  // OpenBLAS, attention by its tiled online softmax), which the generated
  // kernel reads as the param after the inputs.
  Value product;
  if (region_.leading_step()) {
    product = run_leading_step(region_, inputs);
    params.push_back(product.as_tensor()->data());
  }
  std::vector<Value> outs;
  for (int o : region_.outputs) {
    const RegionType& t = region_.type(o);
    Shape shape;
    for (int d : t.dims) shape.push_back(d == kDimOne ? 1 : sym[d]);
    outs.push_back(make_tensor(t.dtype, std::move(shape), false));
    params.push_back(outs.back().as_tensor()->data());
  }
  launch(*kernel_, fn_, params, sym, threads.value_or(threads_));
  return outs;
}

}  // namespace tessera::kir
