// The fused regions the kernel benchmarks run (kernel_tier_bench on the CPU,
// cuda_device_bench on a GPU), in the region text form (vm/graph/region.h).
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::bench_regions {

// A benchmark case: a region at one shape (its symbols' values).
struct BenchCase {
  const char* name;
  const char* region;
  std::vector<int64_t> symbols;
};

// x * y + x, scaled: two f32 inputs of one shape.
constexpr const char* kMulAdd =
    "%0 = input : f32[s0, s1]\n%1 = input : f32[s0, s1]\n%2 = mul(%0, %1) : f32[s0, s1]\n"
    "%3 = add(%2, %0) : f32[s0, s1]\n%4 = input : float\n%5 = mul(%3, %4) : f32[s0, s1]\noutputs %5\n";
// A rank-3 tensor with a row and a column broadcast.
constexpr const char* kBroadcast3 =
    "%0 = input : f32[s0, s1, s2]\n%1 = input : f32[s1, 1]\n%2 = add(%0, %1) : f32[s0, s1, s2]\n"
    "%3 = input : f32[s2]\n%4 = mul(%2, %3) : f32[s0, s1, s2]\noutputs %4\n";
// The tensor suite's elementwise chain: tanh(y * 1.3 + x) * sigmoid(y - 0.2) * 1.7 + x * 0.05.
constexpr const char* kChain =
    "%0 = input : f32[s0]\n%1 = input : float\n%2 = mul(%0, %1) : f32[s0]\n%3 = input : f32[s0]\n"
    "%4 = add(%2, %3) : f32[s0]\n%5 = tanh(%4) : f32[s0]\n%6 = input : float\n%7 = sub(%0, %6) : f32[s0]\n"
    "%8 = sigmoid(%7) : f32[s0]\n%9 = mul(%5, %8) : f32[s0]\n%10 = input : float\n%11 = mul(%9, %10) : f32[s0]\n"
    "%12 = input : float\n%13 = mul(%3, %12) : f32[s0]\n%14 = add(%11, %13) : f32[s0]\noutputs %14\n";

// Row kernels: the tensor suite's softmax + rms_norm row, a layer_norm with
// weight and bias after a residual add, and a row sum of a product.
constexpr const char* kSoftmaxRms =
    "%0 = input : f32[s0, s1]\n%1 = input : float\n%2 = mul(%0, %1) : f32[s0, s1]\n"
    "%3 = softmax(%2, axis=1) : f32[s0, s1]\n%4 = input : f32[s1]\n"
    "%5 = rms_norm(%3, weight=%4, eps=1e-06) : f32[s0, s1]\noutputs %5\n";
constexpr const char* kLayerNorm =
    "%0 = input : f32[s0, s1]\n%1 = input : f32[s0, s1]\n%2 = add(%0, %1) : f32[s0, s1]\n%3 = input : f32[s1]\n"
    "%4 = input : f32[s1]\n%5 = layer_norm(%2, weight=%3, bias=%4, eps=1e-05) : f32[s0, s1]\noutputs %5\n";
constexpr const char* kRowSum =
    "%0 = input : f32[s0, s1]\n%1 = input : f32[s0, s1]\n%2 = mul(%0, %1) : f32[s0, s1]\n"
    "%3 = sum(%2, axis=1) : f32[s0]\noutputs %3\n";
// The MLP block's first product with its epilogue: gelu(x @ w + b).
constexpr const char* kMatmulGelu =
    "%0 = input : f32[s0, s1]\n%1 = input : f32[s1, s2]\n%2 = matmul(%0, %1) : f32[s0, s2]\n"
    "%3 = input : f32[s2]\n%4 = add(%2, %3) : f32[s0, s2]\n%5 = gelu(%4) : f32[s0, s2]\noutputs %5\n";

}  // namespace tessera::bench_regions
