// The kernel of one K3 variant of an attention test case
// (tests/codegen/kernel/cuda_test_cases.h) as the GPU target builds it
// (runtime/kernels/gpu_target.cpp: the variant's query rows, threads and
// wgmma), for the tests that compile or run every variant the tuner may
// choose.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "codegen/kernel/cuda/cuda_region.h"
#include "runtime/kernels/gpu_target.h"
#include "tests/codegen/kernel/cuda_test_cases.h"

namespace tessera::device::testing {

// nullopt where the emitter refuses the variant (a thread would hold more
// than 64 elements of a tile), which the tuner skips too.
inline std::optional<std::pair<kir::Kernel, kir::CudaKernelSource>> attention_variant_kernel(
    const kir::testing::CudaCase& c, const kernels::DimSpec& spec, const kernels::KernelVariant& v) {
  const kir::RegionLowering opt = v.lowering(spec);
  kir::Kernel k = kir::lower_attention(c.region, c.name, opt, kir::attention_tiles(c.region, opt, v.rows));
  kir::CudaTarget target = kir::cuda_target_for(c.region, v.threads);
  target.wgmma = v.wgmma;
  try {
    kir::CudaKernelSource src = kir::emit_cuda_kernel(k, "tsr_" + c.name, target);
    return std::make_pair(std::move(k), std::move(src));
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("elements is more than"), std::string::npos) << c.name << " " << v.str() << ": " << e.what();
    return std::nullopt;
  }
}

}  // namespace tessera::device::testing
