// Kernel IR: one tensor kernel at the level of a program instance working on
// tiles (Triton's model; docs/tensor-jit.md). It is the contract between the
// fusion of tensor operations and the emitters (CPU through LLVM, CUDA C++
// through NVRTC), so it names no vector width, thread or cache level:
//
//   - dims: named sizes, parameters of the kernel (K2) or constants (K3);
//   - params: contiguous row-major tensors read or written, shapes in dims;
//   - grid: up to three axes of program instances, extents made of dims;
//   - body: SSA over scalars and tiles of static shape (tile<64x64xf32>);
//     loads and stores address a param by flat element offsets with an
//     optional mask, which is how strides and broadcasting are spelled;
//     `for` loops carry values (iter) and end with `yield`.
//
// The operations are one table (kernel_ops.def). The text form
// (kernel_text.h) round-trips; the verifier (kernel_verify.h) checks types,
// shapes and dominance.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::kir {

enum class KOp : uint8_t {
#define KOP(Id, name, shape, min_ops, max_ops, flags, doc) Id,
#include "codegen/kernel/kernel_ops.def"
#undef KOP
  NumOps
};

enum class KShape : uint8_t {
  Const, Dim, ProgramId, Range, Splat, Broadcast, Trans, Unary, Binary, Cmp, Select, Cast,
  Load, Store, BlockLoad, Reduce, Dot, For, Yield
};

enum KFlag : uint8_t { Pure = 1, Float = 2, Terminator = 4 };

struct KOpInfo {
  const char* name;
  KShape shape;
  uint8_t min_operands, max_operands;
  uint8_t flags;
  const char* doc;
};
const KOpInfo& op_info(KOp op);
std::optional<KOp> op_by_name(std::string_view name);

// Element types. Tensors of f16/bf16 are loaded as such and cast to f32.
// f64 holds row statistics (sums accumulated in double, as the
// interpreter's): add sub mul div min max sqrt neg abs, comparisons,
// select and casts only.
enum class Elem : uint8_t { I1, I32, I64, F16, BF16, F32, F64 };
const char* elem_name(Elem e);
std::optional<Elem> elem_by_name(std::string_view name);
inline bool elem_is_float(Elem e) { return e == Elem::F16 || e == Elem::BF16 || e == Elem::F32 || e == Elem::F64; }

// A scalar (empty shape) or a tile of static shape.
struct Type {
  Elem elem = Elem::F32;
  std::vector<int64_t> shape;
  bool is_tile() const { return !shape.empty(); }
  int64_t numel() const;
  bool operator==(const Type&) const = default;
};
std::string type_str(const Type& t);  // "f32", "tile<64x64xf32>"

enum class Pred : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
enum class ReduceKind : uint8_t { Sum, Max, Min, ArgMax };
const char* pred_name(Pred p);
const char* reduce_name(ReduceKind r);

using ValueId = uint32_t;

struct ValueInfo {
  Type type;
  std::string name;  // without the '%'
};

struct Block;

struct Inst {
  KOp op = KOp::Const;
  std::vector<ValueId> operands;
  // One result, none (store, yield), or a for loop's loop-carried values.
  std::vector<ValueId> results;
  // Attributes; which one means something depends on the op's shape:
  double fvalue = 0;   // Const of a float type
  int64_t ivalue = 0;  // Const of an int type
  int32_t index = 0;   // Dim: dim number; ProgramId, Broadcast, Reduce: axis; Load, Store, BlockLoad: param number
  bool transposed = false;  // BlockLoad: the block transposed
  Pred pred = Pred::Eq;
  ReduceKind reduce = ReduceKind::Sum;
  std::unique_ptr<Block> body;  // For: args are the induction variable, then the iter values

  Inst() = default;
  Inst(Inst&&) = default;
  Inst& operator=(Inst&&) = default;
};

struct Block {
  std::vector<ValueId> args;
  std::vector<Inst> insts;
};

// A dimension of a param's shape: kernel dim #dim, or the constant value.
struct DimRef {
  int dim = -1;
  int64_t value = 0;
  bool operator==(const DimRef&) const = default;
};

// A grid extent: ceil(factor * product of dims / div).
struct Extent {
  int64_t factor = 1;
  std::vector<int> dims;
  int64_t div = 1;
  bool operator==(const Extent&) const = default;
};

struct Param {
  std::string name;  // without the '%'
  Elem elem = Elem::F32;
  std::vector<DimRef> shape;
  bool output = false;
};

constexpr int kMaxGridAxes = 3;

class Kernel {
 public:
  std::string name;  // without the '@'
  std::vector<std::string> dims;
  // K3: a dim with a value is a constant of the kernel (a dim that keeps
  // changing may stay a parameter); K2: none has a value.
  std::vector<std::optional<int64_t>> dim_values;
  std::vector<Param> params;
  std::vector<Extent> grid;
  Block body;

  ValueId new_value(Type t, std::string name = {});
  const ValueInfo& value(ValueId v) const { return values_.at(v); }
  ValueInfo& value(ValueId v) { return values_.at(v); }
  size_t num_values() const { return values_.size(); }
  int param_index(std::string_view name) const;  // -1: none
  int dim_index(std::string_view name) const;    // -1: none
  // Whether every dim is a constant (a K3 kernel).
  bool specialized() const;
  // The grid's extents for these dims' values (three, 1 for missing axes).
  std::vector<int64_t> grid_extents(const std::vector<int64_t>& dims) const;

 private:
  std::vector<ValueInfo> values_;
};

// Builds a kernel's body in order, typing each result from its operands.
// Throws std::invalid_argument on operands that do not fit (the verifier's
// rules), so that a lowering bug shows where it happens.
class KernelBuilder {
 public:
  explicit KernelBuilder(Kernel& k) : k_(k), block_(&k.body) {}

  ValueId const_float(double v, Elem e = Elem::F32);
  ValueId const_int(int64_t v, Elem e = Elem::I64);
  ValueId dim(int d);
  ValueId program_id(int axis);
  ValueId range(int64_t n);
  ValueId splat(ValueId scalar, std::vector<int64_t> shape);
  ValueId broadcast(ValueId tile, int axis, int64_t n);
  ValueId trans(ValueId tile);
  ValueId unary(KOp op, ValueId x);
  ValueId binary(KOp op, ValueId a, ValueId b);
  ValueId cmp(Pred p, ValueId a, ValueId b);
  ValueId select(ValueId mask, ValueId a, ValueId b);
  ValueId cast(ValueId x, Elem to);
  ValueId load(int param, ValueId offset, std::optional<ValueId> mask = {}, std::optional<ValueId> other = {});
  void store(int param, ValueId offset, ValueId v, std::optional<ValueId> mask = {});
  // Rows r0 .. r0+rows-1 and columns c0 .. c0+cols-1 of the row-major
  // [nrows, ncols] matrix at element `base` of param (`stride` elements per
  // row), zero outside it; transposed: the [cols, rows] block's transpose.
  ValueId load_block(int param, ValueId base, ValueId r0, ValueId c0, ValueId nrows, ValueId ncols, ValueId stride,
                     int64_t rows, int64_t cols, bool transposed = false);
  // A float sum may give f64 (`acc`): the sum in double, not rounded to f32.
  ValueId reduce(ReduceKind r, ValueId tile, int axis, std::optional<Elem> acc = {});
  ValueId dot(ValueId a, ValueId b, ValueId acc);

  // for iv = lo to hi step step, with loop-carried values starting at inits:
  // begin_for returns the body's args (iv, then one per init) and builds
  // into the body until end_for(next values), which returns the results.
  std::vector<ValueId> begin_for(ValueId lo, ValueId hi, ValueId step, const std::vector<ValueId>& inits);
  std::vector<ValueId> end_for(const std::vector<ValueId>& next);

  // Names the value in the text form (default: its number).
  ValueId named(ValueId v, std::string name);

 private:
  Inst& emit(KOp op, std::vector<ValueId> operands, std::optional<Type> result);
  const Type& type(ValueId v) const { return k_.value(v).type; }

  Kernel& k_;
  Block* block_;
  std::vector<std::pair<Block*, size_t>> loops_;  // enclosing block, index of the for
};

}  // namespace tessera::kir
