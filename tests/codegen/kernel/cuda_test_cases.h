// Regions of every kernel kind the CUDA emitter is given (elementwise
// chains, broadcasting, half precision, ints and casts, row kernels with
// reductions, softmax and the norms, matmul epilogues, attention), each
// with inputs whose shapes are not multiples of the tile sizes and include
// size-1 and empty dims. Shared by the emulation test (which runs the
// generated CUDA C++ on the host) and the NVRTC test (which compiles it for
// the GPU architectures).
#pragma once

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel/lower_region.h"
#include "vm/graph/region.h"

namespace tessera::kir::testing {

struct CudaCase {
  std::string name;
  Region region;
  std::vector<std::vector<Value>> inputs;  // input sets, each run K2 and K3
  bool attention = false;                  // the region's step as lower_attention's kernel
};

inline Value wave_tensor(DType dt, Shape shape, float scale, float phase) {
  Value v = make_tensor(dt, shape);
  TensorObj& t = *v.as_tensor();
  for (int64_t i = 0; i < t.numel; ++i) t.set_f(i, scale * std::sin(0.37 * static_cast<double>(i) + phase));
  return v;
}

// Rows with many equal values (a coarse staircase, so extremes tie) and,
// in the last rows, NaNs: the first of them is what argmax must find.
inline Value tied_rows(int64_t rows, int64_t cols) {
  Value v = make_tensor(DType::F32, {rows, cols});
  TensorObj& t = *v.as_tensor();
  for (int64_t i = 0; i < t.numel; ++i) t.set_f(i, std::round(2.0 * std::sin(0.37 * static_cast<double>(i))));
  t.set_f((rows - 2) * cols + 700, std::nan(""));
  t.set_f((rows - 2) * cols + 900, std::nan(""));
  t.set_f((rows - 1) * cols + 3, std::nan(""));
  return v;
}

inline RegionAttrs axis_attrs(std::optional<int> axis, bool keepdim = false) {
  RegionAttrs a;
  a.axis = axis;
  a.keepdim = keepdim;
  return a;
}

inline RegionAttrs norm_attrs(double eps, bool weight, bool bias = false) {
  RegionAttrs a;
  a.eps = eps;
  a.weight = weight;
  a.bias = bias;
  return a;
}

inline std::vector<CudaCase> cuda_cases() {
  std::vector<CudaCase> cases;
  {  // tanh(y * 1.3 + x) * sigmoid(y - 0.2) * 1.7 + x * 0.05: the benchmark's chain
    CudaCase c{"chain_f32", {}, {}};
    Region& r = c.region;
    const int n = r.new_symbol();
    const int x = r.add_tensor_input(DType::F32, {n}), y = r.add_tensor_input(DType::F32, {n});
    const int c13 = r.add_scalar_input(ScalarKind::Float), c02 = r.add_scalar_input(ScalarKind::Float);
    int t = *r.add(OpId::Tanh, {*r.add(OpId::Add, {*r.add(OpId::Mul, {y, c13}), x})});
    const int s = *r.add(OpId::Sigmoid, {*r.add(OpId::Sub, {y, c02})});
    t = *r.add(OpId::Mul, {t, s});
    r.outputs = {*r.add(OpId::Add, {t, *r.add(OpId::Gelu, {*r.add(OpId::Mul, {x, c02})})})};
    for (int64_t len : {0, 2, 255, 1000, 4099})
      c.inputs.push_back({wave_tensor(DType::F32, {len}, 0.5f, 0.1f), wave_tensor(DType::F32, {len}, 0.5f, 0.7f),
                          Value::number(1.3), Value::number(0.2)});
    cases.push_back(std::move(c));
  }
  {  // every unary operation of the elementwise table (elementwise_ops.def), one output each,
     // over values out to +-12 (softplus's large-x branch, tanh and erf saturating); log,
     // sqrt and rsqrt of |x| + 0.25
    CudaCase c{"every_unary", {}, {}};
    Region& r = c.region;
    const int n = r.new_symbol();
    const int x = r.add_tensor_input(DType::F32, {n}), q = r.add_scalar_input(ScalarKind::Float);
    const int p = *r.add(OpId::Add, {*r.add(OpId::Abs, {x}), q});
    for (int i = 0; i < kNumUnary; ++i) {
      const Unary u = static_cast<Unary>(i);
      const bool positive = u == Unary::Log || u == Unary::Sqrt || u == Unary::Rsqrt;
      r.outputs.push_back(*r.add(graph_op(u), {positive ? p : x}));
    }
    for (int64_t len : {3, 300})
      c.inputs.push_back({wave_tensor(DType::F32, {len}, 12.0f, 0.3f), Value::number(0.25)});
    cases.push_back(std::move(c));
  }
  {  // broadcasting rows and columns (a size-1 dim), f16 and bf16
    CudaCase c{"broadcast_half", {}, {}};
    Region& r = c.region;
    const int n = r.new_symbol(), d = r.new_symbol();
    const int x = r.add_tensor_input(DType::F16, {n, d});
    const int row = r.add_tensor_input(DType::F16, {d});
    const int col = r.add_tensor_input(DType::BF16, {n, kDimOne});
    const int a = *r.add(OpId::Mul, {x, row});
    const int b = *r.add(OpId::Add, {a, col});
    const int e = *r.add(OpId::Exp, {*r.add(OpId::Neg, {a})});
    r.outputs = {*r.add(OpId::Max, {e, x}), *r.add(OpId::Cast, {b}, DType::BF16)};
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 5}, {64, 300}, {2, 0}})
      c.inputs.push_back({wave_tensor(DType::F16, {rows, cols}, 3.0f, 0.2f), wave_tensor(DType::F16, {cols}, 1.5f, 0.4f),
                          wave_tensor(DType::BF16, {rows, 1}, 2.0f, 0.9f)});
    cases.push_back(std::move(c));
  }
  {  // ints that wrap, comparisons, where, casts to and from every kind
    CudaCase c{"ints_where_casts", {}, {}};
    Region& r = c.region;
    const int n = r.new_symbol();
    const int a = r.add_tensor_input(DType::I32, {n}), b = r.add_tensor_input(DType::I64, {n});
    const int k = r.add_scalar_input(ScalarKind::Int);
    const int f = r.add_tensor_input(DType::F32, {n});
    const int s = *r.add(OpId::Add, {*r.add(OpId::Mul, {a, k}), b});
    const int gt = *r.add(OpId::Gt, {s, k});
    const int w = *r.add(OpId::Where, {gt, *r.add(OpId::Abs, {s}), *r.add(OpId::Neg, {b})});
    r.outputs = {w, *r.add(OpId::Cast, {*r.add(OpId::Mul, {f, f})}, DType::I32), *r.add(OpId::Cast, {w}, DType::F16), gt,
                 *r.add(OpId::Cast, {f}, DType::Bool)};
    Value av = make_tensor(DType::I32, {9}), bv = make_tensor(DType::I64, {9}), fv = make_tensor(DType::F32, {9});
    const int64_t as[] = {1, -2, 2147483647, -2147483647 - 1, 7, 0, 100000, -5, 3};
    const int64_t bs[] = {5, -100, 3, -9000000000000000000LL, 9, 0, -7, 12, 9000000000000000000LL};
    const double fs[] = {1.5, -2.5, 60000.0, 1e30, -1e30, std::nan(""), 0.0, -0.0, 46341.0};
    for (int i = 0; i < 9; ++i) {
      av.as_tensor()->set_i(i, as[i]);
      bv.as_tensor()->set_i(i, bs[i]);
      fv.as_tensor()->set_f(i, fs[i]);
    }
    c.inputs.push_back({av, bv, Value::integer(3), fv});
    cases.push_back(std::move(c));
  }
  {  // softmax of a scaled row, then rms_norm with a weight
    CudaCase c{"softmax_rms_norm", {}, {}};
    Region& r = c.region;
    const int n = r.new_symbol(), d = r.new_symbol();
    const int x = r.add_tensor_input(DType::F32, {n, d});
    const int s = r.add_scalar_input(ScalarKind::Float);
    const int w = r.add_tensor_input(DType::F32, {d});
    const int p = *r.add(OpId::Softmax, {*r.add(OpId::Mul, {x, s})}, axis_attrs(-1));
    r.outputs = {*r.add(OpId::RmsNorm, {p, w}, norm_attrs(1e-6, true))};
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 5}, {4, 1100}, {0, 7}})
      c.inputs.push_back({wave_tensor(DType::F32, {rows, cols}, 1.5f, 0.3f), Value::number(2.0),
                          wave_tensor(DType::F32, {cols}, 0.5f, 1.1f)});
    cases.push_back(std::move(c));
  }
  {  // layer_norm with weight and bias between an elementwise producer and consumer
    CudaCase c{"layer_norm", {}, {}};
    Region& r = c.region;
    const int n = r.new_symbol(), d = r.new_symbol();
    const int x = r.add_tensor_input(DType::F32, {n, d}), y = r.add_tensor_input(DType::F32, {n, d});
    const int w = r.add_tensor_input(DType::F32, {d}), b = r.add_tensor_input(DType::F32, {d});
    const int ln = *r.add(OpId::LayerNorm, {*r.add(OpId::Add, {x, y}), w, b}, norm_attrs(1e-5, true, true));
    r.outputs = {*r.add(OpId::Gelu, {*r.add(OpId::Add, {ln, x})})};
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 5}, {5, 1030}})
      c.inputs.push_back({wave_tensor(DType::F32, {rows, cols}, 3.0f, 0.2f), wave_tensor(DType::F32, {rows, cols}, 1.0f, 0.9f),
                          wave_tensor(DType::F32, {cols}, 0.7f, 0.5f), wave_tensor(DType::F32, {cols}, 0.2f, 0.1f)});
    cases.push_back(std::move(c));
  }
  // Each reduction along the last axis, with and without keepdim, and of every axis.
  const std::pair<OpId, const char*> reductions[] = {
      {OpId::Sum, "sum"}, {OpId::Mean, "mean"}, {OpId::Amax, "amax"}, {OpId::Amin, "amin"}, {OpId::ArgMax, "argmax"}};
  for (auto [red, red_name] : reductions) {
    for (int form = 0; form < 3; ++form) {  // last axis; last axis with keepdim and a consumer; every axis
      CudaCase c{std::string(red_name) + (form == 0 ? "_row" : form == 1 ? "_row_keepdim" : "_all"), {}, {}};
      Region& r = c.region;
      const int n = r.new_symbol(), d = r.new_symbol();
      const int x = r.add_tensor_input(DType::F32, {n, d});
      const int e = *r.add(OpId::Mul, {x, r.add_scalar_input(ScalarKind::Float)});
      const int v = *r.add(red, {e}, form == 2 ? axis_attrs(std::nullopt) : axis_attrs(-1, form == 1));
      r.outputs = {form == 1 && red != OpId::ArgMax ? *r.add(OpId::Sub, {e, v}) : v};
      for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 5}, {6, 1500}})
        c.inputs.push_back({wave_tensor(DType::F32, {rows, cols}, 2.0f, 0.4f), Value::number(0.5)});
      c.inputs.push_back({tied_rows(4, 1300), Value::number(0.5)});
      cases.push_back(std::move(c));
    }
  }
  {  // half-precision rows: softmax of f16, rms_norm with a bf16 weight
    CudaCase c{"rows_half", {}, {}};
    Region& r = c.region;
    const int n = r.new_symbol(), d = r.new_symbol();
    const int x = r.add_tensor_input(DType::F16, {n, d});
    const int w = r.add_tensor_input(DType::BF16, {d});
    const int p = *r.add(OpId::Softmax, {x}, axis_attrs(-1));
    r.outputs = {*r.add(OpId::RmsNorm, {p, w}, norm_attrs(1e-5, true))};
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 5}, {7, 1029}})
      c.inputs.push_back({wave_tensor(DType::F16, {rows, cols}, 2.0f, 0.3f), wave_tensor(DType::BF16, {cols}, 1.0f, 0.6f)});
    cases.push_back(std::move(c));
  }
  {  // a matrix product's epilogue (the product made before, as cuBLASLt's would be)
    CudaCase c{"matmul_bias_gelu", {}, {}};
    Region& r = c.region;
    const int m = r.new_symbol(), k = r.new_symbol(), n = r.new_symbol();
    const int x = r.add_tensor_input(DType::F32, {m, k});
    const int w = r.add_tensor_input(DType::F32, {k, n});
    const int b = r.add_tensor_input(DType::F32, {n});
    r.outputs = {*r.add(OpId::Gelu, {*r.add(OpId::Add, {*r.add(OpId::MatMul, {x, w}), b})})};
    for (auto [rows, inner, cols] : {std::tuple<int64_t, int64_t, int64_t>{40, 24, 56}, {3, 100, 5}, {0, 4, 6}})
      c.inputs.push_back({wave_tensor(DType::F32, {rows, inner}, 1.0f, 0.1f), wave_tensor(DType::F32, {inner, cols}, 0.5f, 0.7f),
                          wave_tensor(DType::F32, {cols}, 0.25f, 0.3f)});
    cases.push_back(std::move(c));
  }
  // Attention as lower_attention's tiled online-softmax kernel: blocks of
  // queries and keys that are not whole, causal or not, a broadcast batch
  // dim (size 1), f32 and f16.
  for (auto [causal, dt] : {std::pair<bool, DType>{false, DType::F32}, {true, DType::F32}, {false, DType::F16}}) {
    CudaCase c{std::string("attention") + (causal ? "_causal" : "") + (dt == DType::F16 ? "_f16" : ""), {}, {}, true};
    Region& r = c.region;
    const int b = r.new_symbol(), sq = r.new_symbol(), d = r.new_symbol(), sk = r.new_symbol(), dv = r.new_symbol();
    const int q = r.add_tensor_input(dt, {b, sq, d});
    const int k = r.add_tensor_input(dt, {kDimOne, sk, d});
    const int v = r.add_tensor_input(dt, {kDimOne, sk, dv});
    RegionAttrs at;
    at.causal = causal;
    r.outputs = {*r.add(OpId::Attention, {q, k, v}, at)};
    for (auto [bs, sqs, sks, ds, dvs] : {std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>{2, 70, 90, 16, 24}, {3, 5, 5, 4, 4}})
      c.inputs.push_back({wave_tensor(dt, {bs, sqs, ds}, 1.0f, 0.1f), wave_tensor(dt, {1, sks, ds}, 1.0f, 0.4f),
                          wave_tensor(dt, {1, sks, dvs}, 1.0f, 0.7f)});
    cases.push_back(std::move(c));
  }
  // Half-precision attention on the tensor cores (FlashAttention-2's
  // numerics: half products with f32 accumulators, exp2), at the head dims
  // K3 specializes (64, 128, 256) and one that is not a power of two (80),
  // sequence lengths that are not whole tiles, causal and not.
  for (auto [causal, dt] : {std::pair<bool, DType>{false, DType::F16}, {true, DType::BF16}}) {
    CudaCase c{std::string("attention_tc") + (causal ? "_causal" : "") + (dt == DType::F16 ? "_f16" : "_bf16"), {}, {}, true};
    Region& r = c.region;
    const int b = r.new_symbol(), sq = r.new_symbol(), d = r.new_symbol(), sk = r.new_symbol(), dv = r.new_symbol();
    const int q = r.add_tensor_input(dt, {b, sq, d});
    const int k = r.add_tensor_input(dt, {b, sk, d});
    const int v = r.add_tensor_input(dt, {b, sk, dv});
    RegionAttrs at;
    at.causal = causal;
    r.outputs = {*r.add(OpId::Attention, {q, k, v}, at)};
    for (auto [bs, sqs, sks, ds] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{2, 70, 90, causal ? 64 : 80},
                                    {2, 33, 47, 128}, {2, 17, 40, 256}})
      c.inputs.push_back({wave_tensor(dt, {bs, sqs, ds}, 1.0f, 0.1f), wave_tensor(dt, {bs, sks, ds}, 1.0f, 0.4f),
                          wave_tensor(dt, {bs, sks, ds}, 1.0f, 0.7f)});
    cases.push_back(std::move(c));
  }
  // Consumers fused into attention's write (attention_writes_outputs): a
  // bias along the value dim, gelu and a per-query gate (all bf16) on attention
  // on the tensor cores, at head dims 64 (K3 whole) and 96.
  {
    CudaCase c{"attention_tc_epilogue_bf16", {}, {}, true};
    Region& r = c.region;
    const int b = r.new_symbol(), sq = r.new_symbol(), d = r.new_symbol(), sk = r.new_symbol(), dv = r.new_symbol();
    const int q = r.add_tensor_input(DType::BF16, {b, sq, d});
    const int k = r.add_tensor_input(DType::BF16, {b, sk, d});
    const int v = r.add_tensor_input(DType::BF16, {b, sk, dv});
    const int bias = r.add_tensor_input(DType::BF16, {dv});
    const int gate = r.add_tensor_input(DType::BF16, {sq, kDimOne});
    const int o = *r.add(OpId::Attention, {q, k, v});
    r.outputs = {*r.add(OpId::Mul, {*r.add(OpId::Gelu, {*r.add(OpId::Add, {o, bias})}), gate})};
    for (auto [sqs, sks, ds] : {std::tuple<int64_t, int64_t, int64_t>{70, 90, 64}, {33, 47, 96}})
      c.inputs.push_back({wave_tensor(DType::BF16, {2, sqs, ds}, 1.0f, 0.1f), wave_tensor(DType::BF16, {2, sks, ds}, 1.0f, 0.4f),
                          wave_tensor(DType::BF16, {2, sks, ds}, 1.0f, 0.7f), wave_tensor(DType::BF16, {ds}, 0.5f, 0.2f),
                          wave_tensor(DType::BF16, {sqs, 1}, 2.0f, 0.9f)});
    cases.push_back(std::move(c));
  }
  // Grouped-query attention: key/value tensors with fewer heads than q
  // (query head h reads head h / g), g = 2 and 3, f16 on the tensor cores.
  {
    CudaCase c{"attention_gqa_f16", {}, {}, true};
    Region& r = c.region;
    const int b = r.new_symbol(), hq = r.new_symbol(), hkv = r.new_symbol(), sq = r.new_symbol(), d = r.new_symbol(),
              sk = r.new_symbol();
    const int q = r.add_tensor_input(DType::F16, {b, hq, sq, d});
    const int k = r.add_tensor_input(DType::F16, {b, hkv, sk, d});
    const int v = r.add_tensor_input(DType::F16, {b, hkv, sk, d});
    RegionAttrs at;
    at.causal = true;
    r.outputs = {*r.add(OpId::Attention, {q, k, v}, at)};
    for (auto [heads, kv_heads, ds] : {std::tuple<int64_t, int64_t, int64_t>{4, 2, 64}, {6, 2, 80}})
      c.inputs.push_back({wave_tensor(DType::F16, {2, heads, 33, ds}, 1.0f, 0.1f),
                          wave_tensor(DType::F16, {2, kv_heads, 47, ds}, 1.0f, 0.4f),
                          wave_tensor(DType::F16, {2, kv_heads, 47, ds}, 1.0f, 0.7f)});
    cases.push_back(std::move(c));
  }
  return cases;
}

// The kernel for case c: K2, or K3 for these symbols' values.
inline Kernel lower_case(const CudaCase& c, const std::string& name, const std::vector<int64_t>* k3_symbols) {
  RegionLowering opt;
  opt.tile = 256;
  if (k3_symbols) opt.symbol_values.assign(k3_symbols->begin(), k3_symbols->end());
  return c.attention ? lower_attention(c.region, name, opt, attention_tiles(c.region, opt)) : lower_region(c.region, name, opt);
}

}  // namespace tessera::kir::testing
