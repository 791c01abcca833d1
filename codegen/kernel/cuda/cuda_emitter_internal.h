// The CUDA emitter's state and steps, shared by its files (cuda_emitter.h
// has the design note): cuda_emitter.cpp walks the kernel (signature,
// blocks, scalar and elementwise instructions, loads and stores, loops);
// cuda_emitter_staged.cpp the operations that move elements between the
// threads of a block through shared memory (reduce, broadcast, trans, dot).
#pragma once

#include <algorithm>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/kernel/cuda/cuda_emitter.h"

namespace tessera::kir::detail {

class CudaEmitter {
 public:
  CudaEmitter(const Kernel& k, const CudaTarget& t) : k_(k), target_(t) {}

  CudaKernelSource run(const std::string& entry);

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("cuda emitter: kernel @" + k_.name + ": " + what);
  }

  // ------------------------------------------------------------ types and names
  static const char* reg_type(Elem e);  // a value's C type
  static const char* mem_type(Elem e);  // a param element's C type
  const Type& type(ValueId v) const { return k_.value(v).type; }
  const std::string& name(ValueId v);
  // Elements each thread holds of a tile of n elements.
  int64_t per_thread(int64_t n) const { return (n + threads_ - 1) / threads_; }
  // Operand i of `in` at lane j (tiles) or as is (scalars).
  std::string at(ValueId v, bool tile) { return tile ? name(v) + "[tsr_j]" : name(v); }

  // ------------------------------------------------------------ output
  std::ostringstream& line();  // a new line at the current indentation
  // for (tsr_j ...) over the lanes of a tile of n elements, the body with
  // tsr_e = the element index; `guarded`: only lanes inside the tile.
  void open_lanes(int64_t n, bool guarded);
  void close() { --indent_, line() << "}"; }
  void declare(ValueId v);  // "T name;" or "T name[E];"

  std::string float_literal(double v, Elem e) const;
  std::string int_literal(int64_t v, Elem e) const;
  std::string cast_expr(const std::string& x, Elem from, Elem to) const;
  std::string elementwise_expr(const Inst& in, const std::vector<std::string>& xs);

  // ------------------------------------------------------------ instructions
  void block(const Block& b);
  void inst(const Inst& in);
  void elementwise(const Inst& in);
  void load(const Inst& in);
  void block_load(const Inst& in);
  void store(const Inst& in);
  void for_loop(const Inst& in);
  void copy(const std::string& to, const std::string& from, const Type& t);

  // cuda_emitter_staged.cpp: shared memory staging.
  // Writes tile v to shared memory at byte offset `at` as `as` elements;
  // returns the typed pointer's name.
  std::string stage(ValueId v, int64_t at, Elem as);
  void reduce(const Inst& in);
  void reduce_to_scalar(const Inst& in, Elem acc);
  void broadcast(const Inst& in);
  void trans(const Inst& in);
  void dot(const Inst& in);
  // cuda_emitter_mma.cpp: a dot of half tiles on the tensor cores (mma.sync).
  bool mma_fits(const Inst& in) const;
  void dot_mma(const Inst& in);
  // cuda_emitter_wgmma.cpp: the same dot on Hopper's warpgroup wgmma
  // (CudaTarget::wgmma), its operands in the core-matrix layout.
  bool wgmma_fits(const Inst& in) const;
  void dot_wgmma(const Inst& in);
  // Writes tile v ([rows][cols] halves) to shared memory at byte offset
  // `at` in wgmma's core-matrix layout (interleaved_index); the pointer.
  std::string stage_interleaved(ValueId v, int64_t at, Elem as);
  // Block loads whose one use is as an operand of such a dot: each has an
  // area of its own at the start of shared memory (before the scratch area
  // the other operations stage through), which cp.async fills where the
  // load stands and the dot waits for, so the copy overlaps the work
  // between them; never held in registers.
  void plan_staged_loads();
  // Starts copying block load `bl` into its area, rows along the matrix's
  // rows (a transposed load's block as the matrix holds it); the dot that
  // reads it waits (tsr_cp_async_wait<N>, then a barrier). A pipelined
  // load's copy for the loop's first iteration is started before the loop
  // (start_pipelines), and each iteration starts the next one's into the
  // other of its two buffers.
  void stage_block_load(const Inst& bl);
  void start_pipelines(const Inst& loop);
  // The copy itself: block `bl` with its first row and column `r0`, `c0`
  // (C expressions) into `dst`; one cp.async group in every thread.
  // `bar`: the index of the mbarrier (barrier_at) a TMA copy completes on
  // and the cp.async path arrives at, for loads planned for TMA.
  void copy_block(const Inst& bl, const std::string& dst, const std::string& r0, const std::string& c0,
                  const std::string& bar);
  struct StagedLoad {
    int64_t at = 0;              // offset in the staged loads' area
    const Inst* load = nullptr;  // the block load
    std::string ptr;             // the typed pointer's name, once the copy is started
    // Pipelined: the innermost loop whose body holds the load, which
    // operand is its induction variable (1: the first row, 2: the first
    // column; the others do not change in the loop), and the literal of
    // each operand that is a constant made in the body.
    const Inst* loop = nullptr;
    int iv_operand = 0;
    std::unordered_map<size_t, std::string> literals;
    int64_t bytes = 0;  // one buffer
    bool interleaved = false;  // wgmma's core-matrix layout (interleaved_index), else row-major
    // TMA (cuda_emitter_tma.cpp): the tensor map argument (maps_) and the
    // first of its mbarriers (two for a pipelined load, one per buffer);
    // -1: copied by cp.async only. bar_now: the C expression of the
    // barrier of the buffer the current iteration reads.
    int map = -1, bar = -1;
    std::string bar_now;
    // Copied by the producer warp (cuda_emitter_producer.cpp): the first of
    // the two barriers on which the consumers say a buffer is free again,
    // and the one of the buffer the current iteration reads.
    bool by_producer = false;
    int empty = -1;
    std::string empty_now;
  };
  // A tensor-core dot's operands in shared memory: A [M][K] and B ([K][N],
  // or [N][K] where b_by_columns) as halves, row-major or (interleaved)
  // in wgmma's core-matrix layout, C [M][N] in f32 after them; staged
  // loads' copies waited for (every thread's once the caller's barrier
  // passes).
  struct TensorCoreDot {
    int64_t M = 0, K = 0, N = 0;
    std::string sa, sb, sc;
    bool b_by_columns = false;
  };
  TensorCoreDot stage_tensor_core_dot(const Inst& in, bool interleaved);
  // After the warps wrote the product over C: every thread reads back the
  // result elements it holds, between barriers.
  void read_back_dot(const Inst& in, const std::string& sc);
  // Waits for the copies of a tensor-core dot's operands that are staged
  // loads (this thread's, then every thread's at a barrier the caller
  // places) and returns those loads (null: an operand not staged).
  std::pair<const StagedLoad*, const StagedLoad*> wait_staged(const Inst& in);
  // Operand i of a staged load as C: its name, or the literal of a
  // constant the loop body makes (a pipelined load's copy is started
  // before the body).
  std::string staged_operand(const StagedLoad& st, size_t i);
  // Every thread of the block; in a warp-specialized kernel's consumer
  // branch, every consumer (named barrier 1).
  void barrier() {
    if (consumer_) line() << "tsr_bar_sync(1, " << threads_ << ");";
    else line() << "tsr_sync();";
  }

  // cuda_emitter_producer.cpp: producer/consumer warp specialization of a
  // wgmma kernel whose pipelined loads are all TMA-planned loads of one
  // top-level loop. One more warp (the producer) runs that loop alone,
  // copying each iteration's blocks into their buffers once the consumers
  // freed them; the block's other threads (the consumers) run the kernel
  // with those copies replaced by waits. plan_producer decides (after
  // plan_staged_loads); emit_body writes the kernel's body either way.
  void plan_producer();
  void emit_body();
  void emit_producer();
  const Inst* producer_loop_ = nullptr;         // null: no producer warp
  std::vector<const Inst*> producer_prologue_;  // the scalars its loop needs
  bool consumer_ = false;                       // emitting the consumers' branch
  bool producer_copy_ = false;                  // copy_block for the producer warp
  std::vector<int> bar_counts_;                 // arrivals each mbarrier's phase expects
  int producer_threads_ = 0;                    // 32, or 128 with setmaxnreg
  int producer_regs_ = 0, consumer_regs_ = 0;   // setmaxnreg's budgets (0: not used)

  // cuda_emitter_tma.cpp: Hopper's bulk tensor copies (TMA) for the staged
  // loads of wgmma products. A staged load in the core-matrix layout gets a
  // tensor map argument (its param as a 2-D matrix, boxes of 8 columns by
  // the block's rows: one box writes one strip of interleaved_index) and
  // an mbarrier per buffer; one thread issues the boxes where the block
  // lies whole inside the matrix and its rows are the map's, the block's
  // threads copy it by cp.async otherwise (ragged edges, strided views),
  // and either way the barrier's phase completes once per copy.
  void plan_tma(StagedLoad& st, int64_t rows);
  // The barriers' area at the start of shared memory (reserved by
  // plan_staged_loads for wgmma's staged loads), and their initialization
  // by thread 0 before anything else.
  static constexpr int kMaxBarriers = 16;
  static constexpr int64_t kBarrierBytes = kMaxBarriers * 8;
  void init_barriers();
  // The index of a barrier as copy_block's `bar` (empty without TMA).
  std::string barrier_at(const std::string& index) const { return bars_ ? index : std::string(); }
  // Opens `if (TMA fits) { thread 0 issues the boxes } else {` (the caller
  // writes the cp.async copy and closes it).
  void copy_block_tma(const Inst& bl, int64_t rows, int64_t cols, const std::function<std::string(size_t)>& op,
                      const std::string& bar);
  // Waits for the phase of the barrier of the buffer st's dot reads.
  void wait_tma(const StagedLoad& st);
  struct TensorMapArg {
    int param = 0;
    int64_t box_rows = 0;
  };
  std::vector<TensorMapArg> maps_;
  int bars_ = 0;  // mbarriers (at most kMaxBarriers)

  const Kernel& k_;
  CudaTarget target_;
  int threads_ = 32;
  std::ostringstream out_;
  int indent_ = 0;
  int64_t shared_bytes_ = 0;
  int tmp_ = 0;  // numbering of temporaries
  std::unordered_map<ValueId, std::string> names_;
  std::unordered_map<ValueId, StagedLoad> staged_loads_;  // plan_staged_loads
  int64_t staged_bytes_ = 0;  // their areas, before the scratch area
  // Staged loads whose copies were started and not yet waited for, in
  // program order (each is one cp.async group of every thread): a dot
  // waits with wait_group N, N the copies started after the last it reads.
  struct InFlight {
    ValueId load;
    bool next;  // the next iteration's copy of a pipelined load
  };
  std::vector<InFlight> inflight_;
  // A loop with pipelined loads counts its iterations (the buffers'
  // parity; no 64-bit division, which is a call on a GPU).
  std::unordered_map<const Inst*, std::string> iteration_;
};

// wgmma's core-matrix layout without swizzle of a [rows][cols] half tile
// (rows and cols multiples of 8): 8x8 blocks of 128 contiguous bytes,
// row-major within, the blocks column by column (blocks of one 8-column
// strip are consecutive: the strip is what one TMA box of 8 columns by
// `rows` rows writes); the C expression of element (r, c)'s index.
inline std::string interleaved_index(const std::string& r, const std::string& c, int64_t rows) {
  return "((" + c + ") / 8 * " + std::to_string(rows / 8) + " + (" + r + ") / 8) * 64 + (" + r + ") % 8 * 8 + (" + c +
         ") % 8";
}

// Instructions computed element by element (one result per lane, or a scalar).
inline bool is_elementwise(KShape s) {
  return s == KShape::Unary || s == KShape::Binary || s == KShape::Cmp || s == KShape::Select || s == KShape::Cast;
}

// Bytes of one element of a tile staged in shared memory (i1 as a byte).
inline int64_t elem_bytes(Elem e) {
  static constexpr int64_t kBytes[] = {1, 4, 8, 2, 2, 4, 8};
  return kBytes[static_cast<size_t>(e)];
}

// Staging areas start on 16-byte boundaries of the shared memory.
inline int64_t aligned16(int64_t bytes) { return (bytes + 15) / 16 * 16; }

// The accumulator of a sum: f64 for floats (rounded once at the end), the
// element type for ints (wrapping).
inline Elem sum_acc(Elem e) { return elem_is_float(e) ? Elem::F64 : e; }

}  // namespace tessera::kir::detail
