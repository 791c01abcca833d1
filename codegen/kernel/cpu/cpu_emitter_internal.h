// The CPU emitter's state and its steps, shared by the files that make it
// (cpu_emitter.h has the design note): cpu_emitter.cpp walks the kernel
// (blocks, runs of strip operations, scalar instructions),
// cpu_emitter_memory.cpp loads and stores params, cpu_emitter_math.cpp
// computes elementwise operations on scalars and strips alike, and
// cpu_emitter_tiles.cpp the operations on whole tiles (reductions, dot,
// broadcast, trans) and loops.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/kernel/cpu/cpu_emitter.h"

namespace tessera::kir::detail {

constexpr int64_t kSumLanes = 16;   // the interpreter's summation order (vector_math.h)
constexpr int64_t kSumBlock = 1024;
constexpr int64_t kMaxTileBytes = 1 << 20;  // all tile buffers of a kernel together

class CpuEmitter {
 public:
  CpuEmitter(const Kernel& k, llvm::Module& m, const CpuTarget& t)
      : k_(k), m_(m), ctx_(m.getContext()), b_(ctx_), W_(t.lanes) {}

  void run(const std::string& fn_name);

 private:
  struct Repr {
    llvm::Value* scalar = nullptr;  // a scalar's value
    llvm::Value* buf = nullptr;     // a tile's buffer
  };

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("cpu emitter: kernel @" + k_.name + ": " + what);
  }

  // ------------------------------------------------------------ types
  llvm::Type* reg_type(Elem e);
  llvm::Type* mem_type(Elem e) { return e == Elem::I1 ? b_.getInt8Ty() : reg_type(e); }
  llvm::Type* vec(llvm::Type* t) { return llvm::FixedVectorType::get(t, static_cast<unsigned>(W_)); }
  const Type& type(ValueId v) const { return k_.value(v).type; }

  // ------------------------------------------------------------ control flow
  // for (i = lo; i < hi; i += step) body(i), as an LLVM loop (step > 0).
  void loop(llvm::Value* lo, llvm::Value* hi, const std::function<void(llvm::Value*)>& body, llvm::Value* step = nullptr);
  void loop(int64_t n, const std::function<void(llvm::Value*)>& body) { loop(b_.getInt64(0), b_.getInt64(n), body); }

  // Over a tile of n elements in strips of W: body(strip start).
  void strips(int64_t n, const std::function<void(llvm::Value*)>& body) {
    loop(b_.getInt64(0), b_.getInt64(n), body, b_.getInt64(W_));
  }

  // ------------------------------------------------------------ values
  int64_t padded(int64_t n) const;

  llvm::Value* new_buffer(const Type& t);

  llvm::Value* scalar(ValueId v);
  llvm::Value* buf(ValueId v);
  llvm::Value* elem_ptr(llvm::Value* base, Elem e, llvm::Value* index) { return b_.CreateGEP(mem_type(e), base, index); }

  // The strip of v starting at `start` as a <W x T> register value.
  llvm::Value* strip(ValueId v, llvm::Value* start);
  void put_strip(ValueId v, llvm::Value* start, llvm::Value* x);
  // Lanes of the strip at `start` that lie inside a tile of n elements.
  llvm::Value* in_tile(llvm::Value* start, int64_t n);

  // ------------------------------------------------------------ math
  llvm::Value* sleef(const char* fn, std::vector<llvm::Value*> xs);
  llvm::Value* trig(const char* fn, llvm::Value* x);  // sin, cos: lane by lane (kTrigFastMax)

  llvm::Value* splat_like(llvm::Value* like, llvm::Value* x);
  llvm::Value* fconst(llvm::Value* like, double v) { return splat_like(like, llvm::ConstantFP::get(b_.getFloatTy(), v)); }

  llvm::Value* is_nan(llvm::Value* x) { return b_.CreateFCmpUNO(x, x); }

  // The operation of `in` on scalars or on strips alike.
  llvm::Value* compute(const Inst& in, const std::vector<llvm::Value*>& x);

  llvm::Value* sigmoid(llvm::Value* x);

  llvm::Value* compare(Pred p, bool fl, llvm::Value* a, llvm::Value* b);

  llvm::Value* like_type(llvm::Value* like, llvm::Type* scalar);
  llvm::Type* same_shape(llvm::Value* like, llvm::Type* scalar) { return like_type(like, scalar)->getType(); }

  // bf16 <-> f32 as the interpreter does (vm/tensor/dtype.cpp): round to
  // nearest even, NaN kept quiet.
  llvm::Value* bf16_to_f32(llvm::Value* h);
  llvm::Value* f32_to_bf16(llvm::Value* f);

  llvm::Value* cast(llvm::Value* x, Elem from, Elem to);

  // ------------------------------------------------------------ instructions
  // A block's instructions in order, except that runs of strip operations on
  // tiles of one size become one loop over the strips (strip_group).
  void block(const Block& blk);

  bool elementwise(KShape s) const {
    return s == KShape::Unary || s == KShape::Binary || s == KShape::Cmp || s == KShape::Select || s == KShape::Cast;
  }

  // The tile size of an operation computed strip by strip (elementwise,
  // splat, range, loads and stores of tiles), else 0.
  int64_t strip_numel(const Inst& in) const;

  // Scalar work that may move ahead of a strip loop: it reads no tile and
  // writes no memory (loads read inputs, which no store of a kernel writes).
  bool hoistable_scalar(const Inst& in) const;

  // The strip operations of one size from blk.insts[start] on, with the
  // scalar work between them, as one loop: each strip's values stay in
  // registers, and only values used after the run are stored to their
  // buffers. Returns the index after the run.
  size_t strip_group(const Block& blk, size_t start);

  // The number of leading lanes (at most n) that the stores among `members`
  // keep, when they are all masked by one mask `splat(B) + range < splat(N)`
  // (or `range < splat(N)`); null when not.
  llvm::Value* prefix_lanes(const std::vector<const Inst*>& members, int64_t n, std::optional<ValueId>& mask);

  int uses(ValueId v) {
    if (uses_.empty()) count_uses(k_.body);
    auto it = uses_.find(v);
    return it == uses_.end() ? 0 : it->second;
  }
  void count_uses(const Block& blk) {
    for (const Inst& in : blk.insts) {
      for (ValueId o : in.operands) ++uses_[o];
      if (in.body) count_uses(*in.body);
    }
  }

  // One strip (at `start`, of a tile of n elements) of a strip operation.
  llvm::Value* strip_op(const Inst& in, llvm::Value* s, int64_t n);

  void inst(const Inst& in);

  llvm::Value* scalar_inst(const Inst& in, KShape shape);

  // offsets = splat(s) + range (either order), 1-D: the scalar s; else null.
  std::optional<ValueId> contiguous_base(ValueId off);
  const Inst* def_of(ValueId v) {
    if (defs_.empty()) index_defs(k_.body);
    auto it = defs_.find(v);
    return it == defs_.end() ? nullptr : it->second;
  }
  void index_defs(const Block& blk) {
    for (const Inst& in : blk.insts) {
      for (ValueId r : in.results) defs_[r] = &in;
      if (in.body) index_defs(*in.body);
    }
  }

  // The lanes of a strip that the IR's mask and the tile's end allow (null:
  // all of them).
  llvm::Value* access_mask(const Inst& in, size_t mask_at, llvm::Value* s, int64_t n);

  llvm::Value* load_strip(const Inst& in, llvm::Value* s, int64_t n);

  void store_scalar(const Inst& in);
  void block_load(const Inst& in);

  void store_strip(const Inst& in, llvm::Value* s, int64_t n);

  // Element i of tile v (a scalar load from its buffer), and the store.
  llvm::Value* at(ValueId v, llvm::Value* i) {
    const Elem e = type(v).elem;
    llvm::Value* x = b_.CreateLoad(mem_type(e), elem_ptr(buf(v), e, i));
    return e == Elem::I1 ? b_.CreateICmpNE(x, b_.getInt8(0)) : x;
  }
  void set_at(ValueId v, llvm::Value* i, llvm::Value* x) {
    const Elem e = type(v).elem;
    if (e == Elem::I1) x = b_.CreateZExt(x, b_.getInt8Ty());
    b_.CreateStore(x, elem_ptr(buf(v), e, i));
  }

  // Row-major strides of a tile shape.
  static std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
    std::vector<int64_t> st(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;) st[d - 1] = st[d] * shape[d];
    return st;
  }

  void broadcast(const Inst& in);

  void trans(const Inst& in);

  // A stack slot for a scalar that loops update.
  llvm::AllocaInst* slot(llvm::Type* t) {
    llvm::IRBuilder<> eb(entry_, entry_->begin());
    return eb.CreateAlloca(t);
  }

  // Folds tile v along one axis: for each (outer, inner) position, the n
  // elements at stride `inner`, in the interpreter's order.
  void reduce(const Inst& in);

  llvm::Value* fold(ReduceKind kind, Elem e, Elem acc, int64_t n, const std::function<llvm::Value*(llvm::Value*)>& x);

  // 1-D reductions folded strip by strip in a run's loop (cpu_emitter_reduce.cpp).
  struct StripAcc {
    llvm::AllocaInst* lanes = nullptr;  // sums: 16 f32 lanes
    llvm::AllocaInst* total = nullptr;  // sums: the blocks so far, in double
    llvm::AllocaInst* best = nullptr;   // extremes: per-lane candidate, its index, whether set
    llvm::AllocaInst* idx = nullptr;
    llvm::AllocaInst* have = nullptr;
  };
  bool strip_reducible(const Inst& in) const;
  void begin_strip_reduce(const Inst& in);
  void strip_reduce_step(const Inst& in, llvm::Value* s, int64_t n);
  void end_strip_reduce(const Inst& in, int64_t n);
  void zero_lanes(const StripAcc& a);
  void flush_lanes(const StripAcc& a);

  void dot(const Inst& in);

  // Loop-carried scalars live in stack slots, tiles in buffers the body's
  // yield copies into; LLVM's mem2reg turns the slots into phis.
  void for_loop(const Inst& in);

  void copy_tile(llvm::Value* from, llvm::Value* to, const Type& t);

  const Kernel& k_;
  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  const int W_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  std::vector<llvm::Value*> param_ptrs_, dim_vals_;
  llvm::Value* pid_[3] = {};
  std::unordered_map<ValueId, Repr> vals_;
  std::unordered_map<ValueId, const Inst*> defs_;
  std::unordered_map<ValueId, int> uses_;
  std::unordered_map<ValueId, llvm::Value*> cur_;
  std::unordered_map<const Inst*, StripAcc> accs_;  // values of the strip being emitted
  // Set while the whole strips of a run under a prefix mask are emitted:
  // accesses under this mask need none.
  std::optional<ValueId> full_mask_;
  int64_t tile_bytes_ = 0;
};

}  // namespace tessera::kir::detail
