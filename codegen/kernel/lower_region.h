// Lowers a region of Graph IR operations (vm/graph/region.h) to one kernel
// of the kernel IR, computing every operation as the interpreter's kernel
// computes it (floats in f32 and rounded to their dtype after each
// operation, ints in i64 and wrapped to theirs, row statistics in the
// interpreter's order), so the kernel's results equal the interpreter's bit
// for bit.
//
// Elementwise regions: outputs of rank 2 or more get one program per tile
// of a row (grid: chunks of the last dim, rows), so every input is read
// contiguously along the row or as one scalar per row (row and column
// broadcasts need no per-element index math); others one program per tile
// of the flattened output, inputs read at their broadcast offsets.
//
// Row kernels (regions with reductions or normalizations, lower_rows.cpp):
// one program per row, which computes the row statistics in passes over
// the row (chunks of 1024 elements, or one tile of the whole row when a K3
// kernel knows its length) and then the outputs; elementwise producers
// are computed in the passes that need them, consumers in the last.
//
// Params: the region's inputs in order (a scalar input is a 0-d param: f32
// for a float, i64 for an int, i1 for a bool, which the launcher fills),
// then its outputs. Dims: the region's symbols, named s0, s1, ...
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel/kernel_ir.h"
#include "vm/graph/region.h"

namespace tessera::kir {

struct RegionLowering {
  int64_t tile = 1024;  // elements per program (elementwise kernels)
  // Tiles of the flattened output even at rank >= 2 (inputs read at their
  // broadcast offsets): for short rows, where a program per row would do
  // little work; its index math is cheap once the dims are constants (K3).
  bool flat = false;
  // K3: one entry per symbol, a value for each made constant (a dim that
  // keeps changing stays a parameter); empty: K2.
  std::vector<std::optional<int64_t>> symbol_values;
};

// Throws std::invalid_argument for a region this lowering does not do (an
// operation that does not fuse, outputs of different shapes, an output that
// Region::valid_output refuses).
Kernel lower_region(const Region& r, const std::string& name, const RegionLowering& opt = {});

// The tiles of lower_attention's kernel: query rows per program, keys per
// step of the online softmax, the head dim's chunk of Q Kᵀ, and the value
// columns per program (a wider value dim is split over grid axis 2). All
// multiples of 16 (the tensor cores' k and m).
struct AttentionTiles {
  int64_t rows = 32;
  int64_t keys = 64;
  int64_t head = 64;
  int64_t value = 64;
};
// Whether the region's leading attention takes q, k and v all f16 or all
// bf16: FlashAttention-2's numerics on the tensor cores (else f32 steps).
bool attention_on_tensor_cores(const Region& r);

// Head and value dims up to these are taken whole by a K3 kernel: 256 on
// the tensor-core path (f16/bf16: Q, K and V blocks go to shared memory,
// only S and the accumulator are spread over the threads), 128 for f32
// (whose blocks of Q, K and V are held in registers too); wider ones keep
// K2's chunks of 64 with constant dims.
constexpr int64_t kAttentionMaxWhole = 256;
constexpr int64_t kAttentionMaxWholeF32 = 128;
// K2's tiles (opt has no values), or a K3 kernel's for the dims opt gives:
// the head and value dims whole (rounded up to 16) up to the limits above;
// `rows` query rows per program (0: 32 for f16/bf16 inputs, 16 where a
// dim over 128 is whole, whose [rows, dim] f32 accumulator is spread over
// the threads; 16 for f32, whose blocks are in registers: more rows need
// more than a GPU thread's 255 registers in the CUDA emitter's layout).
AttentionTiles attention_tiles(const Region& r, const RegionLowering& opt, int64_t rows = 0);

// Whether lower_attention's kernel computes the whole region (its
// consumers fused into attention's write): every operation after the
// attention is elementwise and every output is a tensor of the attention's
// shape. Otherwise the kernel writes the attention's result, and the
// region's kernel (lower_region) reads it as its leading step.
bool attention_writes_outputs(const Region& r);

// The region's leading attention (Region::leading_step) as one kernel
// (lower_attention.cpp, which has the design note): params the region's
// inputs, then the region's outputs where attention_writes_outputs (the
// consumers computed from attention's tile in registers, as the region's
// kernel computes them), else attention's result. f32 inputs give the
// interpreter's bits; f16 or bf16 inputs FlashAttention-2's numerics (half
// products with f32 accumulators, exp2). Grouped-query attention by the
// head axis' dims.
Kernel lower_attention(const Region& r, const std::string& name, const RegionLowering& opt = {},
                       const AttentionTiles& tiles = {});

// The dims of a kernel for region r (its symbols, named s0, s1, ...;
// constants where opt gives values) and a param for each region input.
void declare_region_inputs(const Region& r, const RegionLowering& opt, Kernel& k);
// A param's shape for a region value of this type.
std::vector<DimRef> param_dims(const RegionType& t);

// The element type a region value of this type is stored with in a param.
Elem param_elem(const RegionType& t);

}  // namespace tessera::kir
