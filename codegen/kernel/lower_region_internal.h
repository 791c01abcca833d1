// The state and steps of lowering one region to kernel IR, shared by
// lower_region.cpp (the kernel's header, element values, elementwise
// operations, elementwise kernels) and lower_rows.cpp (row kernels:
// reductions and normalizations with their producers and consumers).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "codegen/kernel/lower_region.h"

namespace tessera::kir::detail {

// The element type a value is computed in: f32 for floats, i64 for ints, i1 for bools.
Elem compute_elem(DType d);
Elem compute_elem(const RegionType& t);
Elem elem_of(DType d);

class RegionLowerer {
 public:
  RegionLowerer(const Region& r, const RegionLowering& opt, Kernel& k) : r_(r), opt_(opt), k_(k), b_(k) {}
  void run();
  // lower_attention's fused consumers (attention_writes_outputs): the
  // region's outputs from the leading attention's computed tile `step`,
  // stored at the output elements whose flat offsets are the tile `off`
  // (`mask`: those inside). The kernel's params are declared (the inputs,
  // then the outputs) and its builder is at its top level.
  void epilogue(ValueId step, ValueId off, ValueId mask);

 private:
  // ---- shared (lower_region.cpp)
  void declare_dims_and_params();
  ValueId dim(int s);
  // The product of the symbols of dims[from..] (1 for none), as an i64 scalar.
  ValueId product(const std::vector<int>& dims, size_t from);
  ValueId tile_of(ValueId scalar) { return b_.splat(scalar, tile_shape_.empty() ? std::vector<int64_t>{tile_} : tile_shape_); }
  ValueId row_offset(const std::vector<int>& dims);
  ValueId offsets(const std::vector<int>& dims);
  // A region value at the current iteration (a tile, or a scalar where it
  // does not vary along it), computed as the interpreter computes it.
  ValueId value(int v);
  ValueId load_input(int v);
  ValueId elementwise_op(const RegionOp& o);
  ValueId as_tile(ValueId x, Elem to);
  ValueId convert(ValueId x, Elem to);
  ValueId round_to(ValueId x, DType d);
  bool is_tile(ValueId x) const { return k_.value(x).type.is_tile(); }
  // Params: the region's inputs, the leading step's result (Region::
  // leading_step: the BLAS step's or attention's, read as an input; not in
  // attention's own kernel, epilogue()), the outputs.
  int step_param() const { return static_cast<int>(r_.inputs.size()); }
  int output_param(size_t i) const {
    return static_cast<int>(r_.inputs.size() + (r_.leading_step() && !in_step_kernel_ ? 1 : 0) + i);
  }

  // ---- elementwise kernels (lower_region.cpp)
  void elementwise_kernel();

  // ---- row kernels (lower_rows.cpp)
  // A row statistic: a fold along the row of one element value, computed in
  // a pass over the row before the values that need it.
  enum class StatKind : uint8_t { Sum, Max, Min, ArgMax, SoftmaxMax, SoftmaxSum, Mean1, Var2, SumSq };
  struct Stat {
    StatKind kind;
    int op;  // the region operation it belongs to
    int stage = 0;
    ValueId result = 0, index = 0;  // after its pass: f64 sums, f32 extremes; argmax's index
  };
  void row_kernel();
  void plan_stats();
  int stage_of_value(int v);
  ValueId stat_operand(const Stat& s);
  void stat_pass(int stage);
  ValueId row_op(const RegionOp& o, int v);
  ValueId row_scalar(const Stat& s);
  ValueId norm_inverse(const RegionOp& o, ValueId sum_f64);
  const Stat& stat(int op, StatKind kind) const;
  // Runs body(chunk start) over the row: a counted loop over chunks, or
  // once at 0 where one tile covers the row; carried values as for loops.
  std::vector<ValueId> over_row(const std::vector<ValueId>& inits,
                                const std::function<std::vector<ValueId>(ValueId, const std::vector<ValueId>&)>& body);
  void set_chunk(ValueId c0);
  void spill(const Stat& s);

  const Region& r_;
  const RegionLowering& opt_;
  Kernel& k_;
  KernelBuilder b_;
  int64_t tile_ = 1024;
  std::vector<int64_t> tile_shape_;  // epilogue(): the step's tile (else {tile_})
  bool in_step_kernel_ = false;      // epilogue(): the leading step's own kernel
  std::vector<int> shape_;  // the iteration space: an output's shape, or a row kernel's rows and row
  bool rowwise_ = false;    // programs over rows (chunks of a row within a program)
  bool row_kernel_ = false;
  bool whole_row_ = false;  // a row kernel whose tile covers the row: no loops
  ValueId off_ = 0, mask_ = 0, col0_ = 0, range_ = 0, row_ = 0;
  std::unordered_map<int, ValueId> dims_;
  // Values of the current scope: the kernel's top level, or a loop body
  // (dropped when it ends: its values are not visible after the loop).
  std::unordered_map<int, ValueId> vals_;
  std::vector<std::unordered_map<int, ValueId>> outer_vals_;
  std::vector<Stat> stats_;
  // The output param that carries a row value from one pass to the next
  // (-1: none), and the value it holds after the last pass / this one.
  int spill_param_ = -1;
  std::optional<int> spilled_, pending_spill_;
  std::unordered_map<int, int> value_stage_;
};

}  // namespace tessera::kir::detail
