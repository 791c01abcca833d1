// A region: Graph IR operations that one kernel computes, with the types of
// their inputs (docs/tensor-jit.md). Fusion (optimizer/) makes regions out
// of a trace's tensor operations; codegen/kernel lowers a region to kernel
// IR; the runtime runs the kernel, or runs the region's operations one by
// one with the interpreter's kernels (run_region_reference) where a kernel
// does not apply. A region names no trace and no kernel IR.
//
// Dimensions are symbolic: a tensor dim is a symbol (an index below
// num_symbols) or kDimOne, a dim of size 1. Dims the program makes equal
// (the two sides of a broadcast, a chain of elementwise operations) share a
// symbol, so that one check covers them (bind_symbols); dims that are only
// equal by chance keep symbols of their own. Fusion gives each input dim a
// new symbol with the size it saw (symbol_sizes), and add() merges two
// symbols where a broadcast meets them with equal sizes.
//
// Values are numbered in the order they were made, inputs and operations'
// results alike (fusion finds a run's inputs as it goes); `inputs` and `ops`
// hold them in their own orders, and the inputs' order is the order in
// which their values are passed.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vm/graph/op_table.h"
#include "vm/tensor/kernels.h"

namespace tessera {

constexpr int kDimOne = -1;
// A shape operand's element -1 (reshape: the dim it infers), printed "-1".
constexpr int kDimInfer = -2;

struct RegionType {
  bool tensor = true;
  DType dtype = DType::F32;               // tensor
  std::vector<int> dims;                  // tensor or shape: symbols or kDimOne (shape: or kDimInfer)
  ScalarKind scalar = ScalarKind::Float;  // not a tensor: a script number or bool
  // Not a tensor: a shape (types only), a list of ints whose elements are
  // the dims of the tensor an operation makes of it (zeros, reshape, ...).
  bool shape = false;
  OperandKind kind() const { return OperandKind{tensor, dtype, scalar}; }
  bool operator==(const RegionType&) const = default;
};

// The attributes of an operation that a kernel needs (the op table's, bound
// to constants by fusion); which ones mean something depends on the op.
struct RegionAttrs {
  DType cast_to = DType::F32;  // cast
  // Reductions: the axis (>= 0) or none (every axis); softmax: the axis.
  std::optional<int> axis;
  bool keepdim = false;  // reductions
  bool causal = false;   // attention
  std::optional<double> scale;  // attention (none: 1 / sqrt(d))
  double eps = 0;        // layer_norm, rms_norm
  // layer_norm, rms_norm: whether args[1] (weight) and the next (bias) are given.
  bool weight = false, bias = false;
  // Types only: transpose's two axes, permute's order (ints of the call,
  // constants or pinned by guards); tensor()'s dims (the lengths of its
  // nested list, guarded); slice's axis is `axis`. Printed dim0=, dim1=, ...
  std::vector<int> axes;
  // Types only: arange's last argument is its step; a dtype argument that
  // is nil (arange: the dtype its arguments' kinds give).
  bool step = false, infer_dtype = false;
  bool operator==(const RegionAttrs&) const = default;
};

struct RegionOp {
  OpId op;
  std::vector<int> args;  // region values: tensor inputs, then weight and bias
  RegionAttrs attrs;
  RegionType type;        // of the result
};

class Region {
 public:
  int num_symbols = 0;
  // The size each symbol had where fusion saw it (-1: unknown); empty for
  // a region read from text, whose different symbols never merge.
  std::vector<int64_t> symbol_sizes;
  std::vector<RegionType> inputs;
  std::vector<RegionOp> ops;
  std::vector<int> outputs;  // the values the region's kernel writes
  // A region of types only: the recorder's one-op regions, which say what a
  // call computes (tracer/trace_shapes.h). add() then applies the op
  // table's type rules (the result's dtype and dims, and where the
  // interpreter raises on the operands' types) without the limits of what a
  // kernel computes: double-precision and integer paths, integer division,
  // reductions and softmax along any axis, transpose and permute (their
  // axes: RegionAttrs::axes), and the operations whose shapes come from
  // values (region_value_shapes.cpp): creation from a shape operand,
  // reshape, slice, arange, concat, all_reduce. A result dim that no
  // operand gives (slice's axis, arange's length, reshape's -1, concat's
  // axis) is a new symbol of unknown size, which the recorder reads off the
  // result. Never lowered to a kernel.
  bool types_only = false;

  // New inputs; dims given as symbols or kDimOne.
  int add_tensor_input(DType dt, std::vector<int> dims);
  int add_scalar_input(ScalarKind k);
  // A shape operand (types only): dims are symbols, kDimOne or kDimInfer.
  int add_shape_input(std::vector<int> dims);
  int new_symbol(int64_t seen_size = -1) {
    symbol_sizes.resize(static_cast<size_t>(num_symbols), -1);
    symbol_sizes.push_back(seen_size);
    return num_symbols++;
  }
  // Symbol `from` becomes `to` in every type.
  void replace_symbol(int from, int to);
  // Renumbers the symbols in order of first use, dropping those merged
  // away (fusion calls it when a region is complete).
  void compact_symbols();

  // Appends `op` on `args` with its result type and returns its value
  // (merging symbols its broadcast makes equal), or nullopt, the region
  // unchanged, where the op does not fuse (types_only: where the rules do
  // not type it, or the interpreter raises): a case whose interpreter kernel
  // computes in a way a kernel does not reproduce (double-precision paths,
  // integer division, comparisons with a scalar that f32 may not hold
  // exactly, integer reductions), a reduction or normalization along any
  // axis but the last (reductions: or over every axis), or operands on
  // which the interpreter raises (shapes that do not broadcast, a weight
  // that does not match).
  std::optional<int> add(OpId op, std::vector<int> args, const RegionAttrs& attrs);
  std::optional<int> add(OpId op, std::vector<int> args, DType cast_to = DType::F32) {
    RegionAttrs a;
    a.cast_to = cast_to;
    return add(op, std::move(args), a);
  }

  int num_values() const { return static_cast<int>(values_.size()); }
  const RegionType& type(int v) const;
  bool is_input(int v) const { return values_.at(static_cast<size_t>(v)).input; }
  // Which input (is_input) or operation value v is.
  int index_of(int v) const { return values_.at(static_cast<size_t>(v)).index; }
  const RegionOp& op_of(int v) const { return ops.at(static_cast<size_t>(index_of(v))); }
  // The value of input i / of operation i.
  int value_of_input(size_t i) const;
  int value_of_op(size_t i) const;

  // Whether any operation is a reduction or a normalization (a row kernel).
  bool has_row_ops() const;
  // Whether the first operation is a step that the interpreter's kernel
  // computes (a matrix product: OpenBLAS; attention: its tiled online-
  // softmax kernel), whose result the generated kernel reads as an input
  // (its epilogue: bias, activation, residual, or a row kernel). A matmul or
  // an attention may only be a region's first operation.
  bool leading_step() const {
    return !ops.empty() && (ops.front().op == OpId::MatMul || ops.front().op == OpId::Attention);
  }
  // Row kernels (codegen/kernel/lower_region.h): the dims of the row
  // operations' input, which all row operations share: rows and the row
  // (reductions along the last axis, softmax, the norms), or, when the row
  // operations reduce every axis, the elements walked in order. Empty
  // without row operations.
  std::vector<int> row_dims() const;
  bool reduces_all_axes() const;
  // Whether value v may be the region's output: anything without row
  // operations; with them, a value of the row dims, or one per row (per
  // region for reductions of every axis), which every program writes once.
  bool valid_output(int v) const;

  // A line per value: "%0 = input : f32[s0, 1]", "%2 = mul(%0, %1) : f32[s0, 1]",
  // "%3 = sum(%2, axis=1, keepdim) : f32[s0, 1]",
  // "%5 = layer_norm(%1, weight=%2, bias=%3, eps=1e-05) : f32[s0, s1]".
  std::string str() const;

 private:
  // Right-aligned broadcast of a and b; a pair of different symbols that
  // meet is merged (into `merges`, applied to a and b as it goes) when
  // their seen sizes are equal, else nullopt.
  std::optional<std::vector<int>> broadcast(std::vector<int> a, std::vector<int> b,
                                            std::vector<std::pair<int, int>>& merges) const;
  std::optional<int> add_row_op(OpId op, std::vector<int> args, const std::vector<RegionType>& ts,
                                const RegionAttrs& attrs);
  int push_op(RegionOp o);
  std::optional<int> add_op(OpId op, std::vector<int> args, const RegionAttrs& attrs);
  std::optional<int> add_matmul(std::vector<int> args, const std::vector<RegionType>& ts);
  std::optional<int> add_attention(std::vector<int> args, const std::vector<RegionType>& ts, const RegionAttrs& attrs);
  // Types only: transpose, permute, and the operations whose shapes come
  // from values (region_value_shapes.cpp): false where `op` is not one of
  // those, else `out` is its value (none: not typed).
  bool add_value_shaped(OpId op, std::vector<int>& args, const std::vector<RegionType>& ts, const RegionAttrs& attrs,
                        std::optional<int>& out);
  // Merges symbols a and b where they must be one size (an inner dim):
  // equal, or of equal seen size; false where they cannot be.
  bool unify(int a, int b);
  // Row kernels: whether dims fit the row dims right-aligned (each 1 or the
  // row's symbol), merging symbols of equal seen size where they do not;
  // a reduction along the last axis without keepdim drops the row and may
  // only be an output (terminal).
  bool fit_rows(std::vector<int> dims, std::vector<int> row);
  // Whether a row operation on `arg` (reducing every axis: all_axes) keeps
  // the region one row structure, merging as fit_rows does.
  bool fits_row_structure(int arg, bool all_axes);
  bool terminal(int v) const;

  struct ValueRef {
    bool input;
    int index;
  };
  std::vector<ValueRef> values_;
};

std::string region_type_str(const RegionType& t);

// Grouped-query attention (attention_groups_heads, kernels.h): the symbols
// of attention op o's q head dim and of its k and v head dim (each the dim
// before the tensor's last two), when they are two symbols, k's and v's
// being one; query head h then reads key/value head h / (q's heads / k's).
// Nullopt for any other op, or where the heads are one symbol or broadcast
// (a 1, or a rank below 3), as Region::add types every other attention.
std::optional<std::pair<int, int>> attention_group_heads(const Region& r, const RegionOp& o);

// Reads Region::str()'s text back (the trace IR's text form carries a
// kernel call's region so, and a typed call's region with types_only; a
// result's new symbols take the names the text gives them). Throws
// std::invalid_argument naming the line.
Region parse_region(std::string_view text, bool types_only = false);

// The symbols' values for these input values, or nullopt when they do not
// fit the region's types (a dtype, a rank, a 1 that is not 1, two dims of
// one symbol that differ, a scalar where a tensor is expected) or when the
// interpreter would raise (amax, amin or argmax over an empty axis).
std::optional<std::vector<int64_t>> bind_symbols(const Region& r, std::span<const Value> inputs);

// The interpreter's way: each operation with its op table kernel, in order;
// the outputs' values. Throws what the operations throw.
std::vector<Value> run_region_reference(const Region& r, std::span<const Value> inputs);
// The region's leading step (Region::leading_step: a matrix product, or
// attention) by the interpreter's kernel, for a generated kernel that
// computes the rest to read.
Value run_leading_step(const Region& r, std::span<const Value> inputs);

}  // namespace tessera
