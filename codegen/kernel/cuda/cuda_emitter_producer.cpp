// The CUDA emitter's producer/consumer warp specialization (Hopper's
// attention variant, as FlashAttention-3 splits its warps).
//
// A wgmma kernel whose pipelined block loads (the keys and values of the
// key loop) are all TMA-planned loads of one top-level loop gets one more
// warp, the producer, after its `threads` consumers. The producer computes
// the scalars the loop's bounds and the loads' operands need, then runs
// the loop alone: in iteration i it waits until the consumers freed buffer
// i % 2 (an "empty" mbarrier, from iteration 2 on) and copies the
// iteration's blocks into it (TMA, or cp.async by its 32 threads where a
// block is ragged), completing a "full" mbarrier that expects its 32
// threads. The consumers run the whole kernel with those copies taken out:
// a dot waits on its operand's full barrier (the phase of the buffer's
// fill), and after the dot (whose last barrier says every consumer read
// the buffer) thread 0 arrives on the buffer's empty barrier. So the next
// blocks are copied while the consumers compute, and the consumers issue
// no copy at all.
//
// After the split the consumers sync among themselves (bar.sync 1,
// threads: barrier()), never with the whole block: the producer is polling
// its barriers or has returned. Operations whose code needs every thread of
// the block to take part (warp shuffles of a reduction to a scalar, and in
// the emulation mma.sync and ldmatrix) keep a kernel unspecialized.
#include <algorithm>
#include <unordered_set>

#include "codegen/kernel/cuda/cuda_emitter_internal.h"

namespace tessera::kir::detail {

namespace {
constexpr int kProducerThreads = 32;
constexpr int kMaxBlockThreads = 1024;
constexpr int kMaxRegisters = 255;    // a thread's, as CudaKernelCompiler compiles (-maxrregcount=255)
constexpr int kRegisterFile = 65536;  // a multiprocessor's 32-bit registers (sm_80, sm_90)
constexpr int kProducerRegisters = 40;  // the producer warpgroup's, after setmaxnreg.dec

// Every instruction of b and of the blocks nested in it.
template <class F>
void walk(const Block& b, F&& f) {
  for (const Inst& in : b.insts) {
    f(in);
    if (in.body) walk(*in.body, f);
  }
}
}  // namespace

void CudaEmitter::plan_producer() {
  // A producer warp beside 256 consumers would cap ptxas at 224 registers
  // a thread (65536 / 288), and the consumers spill: there thread 0 issues
  // the copies (setmaxnreg, which moves a producer warpgroup's registers to
  // the consumers as FlashAttention-3 does, is not used).
  if (!target_.wgmma || !target_.producer_warp) return;
  // The pipelined loads, in the order their loop's body makes them: all of
  // one loop, all copied by TMA.
  const Inst* loop = nullptr;
  for (const auto& [v, st] : staged_loads_) {
    if (!st.loop) continue;
    if (st.map < 0 || (loop && st.loop != loop)) return;
    loop = st.loop;
  }
  if (!loop) return;
  auto at = std::find_if(k_.body.insts.begin(), k_.body.insts.end(), [&](const Inst& in) { return &in == loop; });
  if (at == k_.body.insts.end()) return;  // a loop inside another
  bool block_wide = false;
  walk(k_.body, [&](const Inst& in) {
    if (in.op == KOp::Dot && mma_fits(in) && !wgmma_fits(in)) block_wide = true;
    if (in.op == KOp::Reduce && !type(in.results[0]).is_tile()) block_wide = true;
  });
  if (block_wide) return;
  // The producer's prologue: the scalar instructions before the loop (constants,
  // dims, program ids and their arithmetic).
  std::unordered_set<ValueId> have;
  std::vector<const Inst*> prologue;
  for (auto it = k_.body.insts.begin(); it != at; ++it) {
    const Inst& in = *it;
    const KShape shape = op_info(in.op).shape;
    const bool scalar_op = shape == KShape::Const || shape == KShape::Dim || shape == KShape::ProgramId ||
                           (is_elementwise(shape) && !in.results.empty() && !type(in.results[0]).is_tile());
    if (!scalar_op || !std::all_of(in.operands.begin(), in.operands.end(), [&](ValueId o) { return have.count(o); }))
      continue;
    prologue.push_back(&in);
    for (ValueId r : in.results) have.insert(r);
  }
  const ValueId iv = loop->body->args[0];
  for (size_t i = 0; i < 3; ++i)
    if (!have.count(loop->operands[i])) return;
  std::vector<StagedLoad*> loads;
  for (const Inst& in : loop->body->insts) {
    if (in.op != KOp::BlockLoad) continue;
    auto st = staged_loads_.find(in.results[0]);
    if (st == staged_loads_.end() || st->second.loop != loop) continue;
    for (size_t i = 0; i < in.operands.size(); ++i)
      if (in.operands[i] != iv && !st->second.literals.count(i) && !have.count(in.operands[i])) return;
    loads.push_back(&st->second);
  }
  if (bars_ + 2 * static_cast<int>(loads.size()) > kMaxBarriers) return;
  // A producer warp beside the consumers where every thread keeps
  // ptxas's 255 registers; else a producer warpgroup (one warp of it
  // copies) that gives its registers to the consumers with setmaxnreg,
  // where that leaves them more than the launch gives. Decided before any
  // load is given to the producer.
  int threads = kProducerThreads, producer_regs = 0, consumer_regs = 0;
  if ((threads_ + kProducerThreads) * kMaxRegisters > kRegisterFile) {
    threads = 128;
    const int launch = kRegisterFile / (threads_ + threads) / 8 * 8;
    producer_regs = kProducerRegisters;
    consumer_regs = std::min(256, (kRegisterFile - threads * kProducerRegisters) / threads_ / 8 * 8);  // setmaxnreg's most: 256
    if (launch < kProducerRegisters || consumer_regs <= launch) return;  // nothing to gain
  }
  if (threads_ + threads > kMaxBlockThreads) return;
  producer_threads_ = threads;
  producer_regs_ = producer_regs;
  consumer_regs_ = consumer_regs;
  for (StagedLoad* st : loads) {
    st->by_producer = true;
    st->empty = bars_;
    bars_ += 2;
    bar_counts_[static_cast<size_t>(st->bar)] = bar_counts_[static_cast<size_t>(st->bar) + 1] = kProducerThreads;
  }
  bar_counts_.resize(static_cast<size_t>(bars_), 1);
  producer_loop_ = loop;
  producer_prologue_ = std::move(prologue);
}

void CudaEmitter::emit_body() {
  if (!producer_loop_) return block(k_.body);
  line() << "if (tsr_t >= " << threads_ << ") {  // the producer";
  ++indent_;
  if (producer_regs_) {
    line() << "tsr_setmaxnreg_dec<" << producer_regs_ << ">();";
    line() << "if (tsr_t < " << threads_ + kProducerThreads << ") {  // its first warp copies";
    ++indent_;
  }
  emit_producer();
  if (producer_regs_) close();
  --indent_;
  line() << "} else {  // the consumers";
  ++indent_;
  if (consumer_regs_) line() << "tsr_setmaxnreg_inc<" << consumer_regs_ << ">();";
  consumer_ = true;
  block(k_.body);
  consumer_ = false;
  close();
}

void CudaEmitter::emit_producer() {
  line() << "const int tsr_pl = tsr_t - " << threads_ << ";  // the producer's lane";
  for (const Inst* in : producer_prologue_) inst(*in);
  const Inst& f = *producer_loop_;
  const std::string iv = name(f.body->args[0]);
  line() << "int tsr_pit = 0;";
  line() << "for (tsr_i64 " << iv << " = " << name(f.operands[0]) << "; " << iv << " < " << name(f.operands[1]) << "; "
         << iv << " += " << name(f.operands[2]) << ") {";
  ++indent_;
  line() << "const int tsr_pb = tsr_pit & 1;";
  producer_copy_ = true;
  for (const Inst& in : f.body->insts) {
    if (in.op != KOp::BlockLoad) continue;
    auto it = staged_loads_.find(in.results[0]);
    if (it == staged_loads_.end() || !it->second.by_producer) continue;
    const StagedLoad& st = it->second;
    // The buffer's previous blocks (two iterations back) have been read.
    line() << "if (tsr_pit >= 2) tsr_mbar_wait(tsr_bars + " << st.empty << " + tsr_pb, ((tsr_pit >> 1) - 1) & 1);";
    const char* T = mem_type(k_.params[static_cast<size_t>(in.index)].elem);
    copy_block(in, std::string("(") + T + "*)(TSR_SMEM + " + std::to_string(st.at) + " + tsr_pb * " +
                       std::to_string(st.bytes) + ")",
               st.iv_operand == 1 ? iv : staged_operand(st, 1), st.iv_operand == 2 ? iv : staged_operand(st, 2),
               "(" + std::to_string(st.bar) + " + tsr_pb)");
  }
  producer_copy_ = false;
  line() << "++tsr_pit;";
  close();
}

}  // namespace tessera::kir::detail
