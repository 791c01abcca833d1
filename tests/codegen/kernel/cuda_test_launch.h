// How the CUDA tests launch a kernel of a test case (cuda_test_cases.h) as
// the runtime would: the params' values (the case's inputs, the leading
// product made by the interpreter, the outputs allocated), the addresses of
// the kernel's arguments (pointers for tensors, values for the region's
// scalars), dims and grid; and the comparison with the interpreter's
// outputs: f32 within 1e-5 and f16/bf16 within 1e-2 (|got - want| <=
// tol (1 + |want|)), ints and bools exactly.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "codegen/kernel/cuda/cuda_region.h"
#include "tests/codegen/kernel/cuda_test_cases.h"

namespace tessera::kir::testing {

struct CaseLaunch {
  std::vector<int64_t> sym, grid;
  int64_t programs = 0;
  std::vector<Value> values;  // per param: its tensor (data behind ptrs[i]) or scalar
  std::vector<bool> output;   // per param
  union Scalar {
    float f;
    int64_t i;
    uint8_t b;
  };
  std::vector<void*> ptrs;       // per param: the data a pointer param passes (host; a device test swaps them)
  std::vector<Scalar> scalars;   // per param passed by value
  std::vector<void*> params;     // per param: &ptrs[i] or &scalars[i]
  std::vector<void*> args;       // the kernel's arguments (cuda_kernel_args)
  std::vector<TensorMapBytes> maps;  // its tensor maps (a wgmma kernel's TMA copies)

  // `encode`: the device's tensor maps, for a kernel that takes them.
  CaseLaunch(const CudaCase& c, size_t set, const Kernel& k, const CudaKernelSource& src,
             const TensorMapEncoder& encode = {}) {
    const Region& region = c.region;
    const std::vector<Value>& inputs = c.inputs[set];
    sym = *bind_symbols(region, inputs);
    values = inputs;
    if (region.leading_step() && !c.attention) values.push_back(run_leading_step(region, inputs));
    output.assign(values.size(), false);
    for (int o : region.outputs) {
      const RegionType& t = region.type(o);
      Shape shape;
      for (int d : t.dims) shape.push_back(d == kDimOne ? 1 : sym[static_cast<size_t>(d)]);
      values.push_back(make_tensor(t.dtype, std::move(shape)));
      output.push_back(true);
    }
    ptrs.assign(values.size(), nullptr);
    scalars.resize(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      const Value& v = values[i];
      if (v.is_tensor()) ptrs[i] = v.as_tensor()->data();
      else if (v.is_float()) scalars[i].f = static_cast<float>(v.as_float());  // as the interpreter's f32 path rounds it
      else if (v.is_int()) scalars[i].i = v.as_int();
      else scalars[i].b = v.as_bool() ? 1 : 0;
      params.push_back(v.is_tensor() ? static_cast<void*>(&ptrs[i]) : static_cast<void*>(&scalars[i]));
    }
    grid = k.grid_extents(sym);
    programs = grid[0] * grid[1] * grid[2];
    encode_args(src, encode);
  }

  // The arguments again (after a device test pointed ptrs at device
  // memory: tensor maps hold the pointers themselves).
  void encode_args(const CudaKernelSource& src, const TensorMapEncoder& encode) {
    const bool has_maps = std::any_of(src.args.begin(), src.args.end(),
                                      [](const CudaArg& a) { return a.kind == CudaArgKind::TensorMap; });
    args = has_maps && !encode
               ? cuda_kernel_args(src, params, sym, grid, &maps,
                                  [](const TensorMapRequest&, TensorMapBytes&) { return false; })
               : cuda_kernel_args(src, params, sym, grid, &maps, encode);
  }

  std::vector<Value> outputs() const {
    std::vector<Value> out;
    for (size_t i = 0; i < values.size(); ++i)
      if (output[i]) out.push_back(values[i]);
    return out;
  }
};

// Also records the comparison as a property of the test (gtest's XML and
// JSON output): "dtype=f32 shape=[3, 5] worst=E tolerance=T", E the largest
// |got - want| / (1 + |want|), which experiments/harness/run_cuda_emulation.py
// tabulates.
inline void expect_close(const Value& got, const Value& want, const std::string& what) {
  const TensorObj& g = *got.as_tensor();
  const TensorObj& w = *want.as_tensor();
  ASSERT_EQ(g.shape, w.shape) << what;
  ASSERT_EQ(g.dtype, w.dtype) << what;
  const bool exact = g.dtype == DType::I32 || g.dtype == DType::I64 || g.dtype == DType::Bool;
  const double tol = exact ? 0 : g.dtype == DType::F32 ? 1e-5 : 1e-2;
  int shown = 0;
  double worst = 0;
  for (int64_t i = 0; i < g.numel; ++i) {
    const double a = g.get_f(i), b = w.get_f(i);
    const bool ok = exact ? g.get_i(i) == w.get_i(i)
                          : (std::isnan(a) && std::isnan(b)) || a == b || std::fabs(a - b) <= tol * (1 + std::fabs(b));
    if (!exact && !(std::isnan(a) && std::isnan(b)) && a != b) worst = std::max(worst, std::fabs(a - b) / (1 + std::fabs(b)));
    if (exact && !ok) worst = std::max(worst, 1.0);
    if (!ok && shown++ < 5) ADD_FAILURE() << what << ": element " << i << " is " << a << ", want " << b;
  }
  char text[96];
  std::snprintf(text, sizeof text, " worst=%.3g tolerance=%.0e", worst, tol);
  ::testing::Test::RecordProperty(what, std::string("dtype=") + dtype_name(g.dtype) + " shape=" + shape_str(g.shape) + text);
}

}  // namespace tessera::kir::testing
