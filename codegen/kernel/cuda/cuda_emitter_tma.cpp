// The CUDA emitter's bulk tensor copies (Hopper's TMA) for the staged loads
// of wgmma products (cuda_emitter_wgmma.cpp).
//
// A staged load in the core-matrix layout has a tensor map argument: its
// param seen as a 2-D matrix (the last dim's columns by the product of the
// others' rows), read in boxes of 8 columns by the block's rows. One box
// lands as one strip of 8 columns of interleaved_index's layout, so the
// block is cols / 8 boxes, issued by thread 0 against an mbarrier that
// expects the block's bytes. The launcher encodes the maps for each call
// (kir::cuda_kernel_args; cuTensorMapEncodeTiled on a GPU).
//
// A box reads whole rows of the flattened matrix and fills zeros only
// past its end, while a block load reads zeros past its own bounds (the
// sequence's end inside a [B, H, S, D] tensor) and may read a strided
// view. So the kernel checks, per copy, that the block lies whole inside
// its bounds and that its rows are the map's rows (row stride = the last
// dim, base offset on a row, 16-byte aligned pointer and columns); where
// not, the block's threads copy it by cp.async as before and thread 0
// arrives at the barrier without bytes. Either way the barrier completes
// one phase per copy; every thread tracks the phase parity of each barrier
// in one register (tsr_phase, a bit per barrier) and flips it when it
// waits, and a bit of tsr_pending per barrier says a copy is to be
// waited for (a block loaded before a loop is read in every iteration and
// waited for once). A copy never waited for is not issued (the pipelined
// copy past the last iteration is skipped), so the phases stay in step.
#include "codegen/kernel/cuda/cuda_emitter_internal.h"

namespace tessera::kir::detail {

namespace {
constexpr int64_t kMaxBoxRows = 256;  // a TMA box dim is 1..256 elements
}  // namespace

void CudaEmitter::plan_tma(StagedLoad& st, int64_t rows) {
  const Param& p = k_.params[static_cast<size_t>(st.load->index)];
  const int need = st.loop ? 2 : 1;
  if (rows % 8 != 0 || rows > kMaxBoxRows || p.shape.empty() || (p.elem != Elem::F16 && p.elem != Elem::BF16) ||
      bars_ + need > kMaxBarriers)
    return;
  int map = -1;
  for (size_t i = 0; i < maps_.size(); ++i)
    if (maps_[i].param == st.load->index && maps_[i].box_rows == rows) map = static_cast<int>(i);
  if (map < 0) {
    map = static_cast<int>(maps_.size());
    maps_.push_back({st.load->index, rows});
  }
  st.map = map;
  st.bar = bars_;
  bars_ += need;
  bar_counts_.resize(static_cast<size_t>(bars_), 1);
}

void CudaEmitter::init_barriers() {
  if (!bars_) return;
  line() << "unsigned long long* tsr_bars = (unsigned long long*)TSR_SMEM;";
  line() << "unsigned tsr_phase = 0u;  // bit b: the parity of barrier b's phase a wait waits for";
  line() << "unsigned tsr_pending = 0u;  // bit b: a copy on barrier b not yet waited for";
  line() << "if (tsr_t == 0) {";
  for (int i = 0; i < bars_; ++i)
    line() << "  tsr_mbar_init(tsr_bars + " << i << ", " << bar_counts_[static_cast<size_t>(i)] << ");";
  line() << "  tsr_fence_mbar_init();";
  line() << "}";
  barrier();
}

void CudaEmitter::copy_block_tma(const Inst& bl, int64_t rows, int64_t cols,
                                 const std::function<std::string(size_t)>& op, const std::string& bar) {
  const StagedLoad& st = staged_loads_.at(bl.results[0]);
  const Param& p = k_.params[static_cast<size_t>(bl.index)];
  const DimRef& last = p.shape.back();
  const std::string width = last.dim >= 0 ? "tsr_dim" + std::to_string(last.dim) : int_literal(last.value, Elem::I64);
  const std::string r0 = "(" + op(1) + ")", c0 = "(" + op(2) + ")", base = "(" + op(0) + ")";
  const std::string R = std::to_string(rows), C = std::to_string(cols);
  line() << "const tsr_i64 tsr_mw = " << width << ";";
  line() << "if (((unsigned long long)tsr_p" << bl.index << " & 15ull) == 0 && tsr_mw % 8 == 0 && (" << op(5)
         << ") == tsr_mw && " << base << " % tsr_mw == 0 && " << c0 << " % 8 == 0 && " << c0 << " + " << C
         << " <= (" << op(4) << ") && " << c0 << " + " << C << " <= tsr_mw && " << r0 << " + " << R << " <= (" << op(3)
         << ") && " << base << " / tsr_mw + " << r0 << " + " << R << " <= 2147483647) {";
  ++indent_;
  // One thread issues the boxes; the producer warp's others arrive too
  // (its barriers expect the warp).
  line() << "if (" << (producer_copy_ ? "tsr_pl" : "tsr_t") << " == 0) {";
  ++indent_;
  const std::string b = "(tsr_bars + " + bar + ")";
  line() << "tsr_mbar_arrive_expect_tx(" << b << ", " << rows * cols * 2 << ");";
  line() << "const int tsr_mr = (int)(" << base << " / tsr_mw + " << r0 << ");";
  line() << "for (int tsr_c = 0; tsr_c < " << cols / 8 << "; ++tsr_c)";
  line() << "  tsr_tma_load_2d(tsr_d + tsr_c * " << rows * 8 << ", &tsr_map" << st.map << ", (int)" << c0
         << " + 8 * tsr_c, tsr_mr, " << b << ");";
  close();
  if (producer_copy_) line() << "else tsr_mbar_arrive(" << b << ");";
  --indent_;
  line() << "} else {";
}

void CudaEmitter::wait_tma(const StagedLoad& st) {
  // A block loaded once and read in every iteration of a loop is waited
  // for once (the bit of its copy is clear after).
  line() << "{";
  ++indent_;
  line() << "const int tsr_b = " << st.bar_now << ";";
  // The producer fills a buffer once per iteration: always waited for.
  line() << "if (" << (st.by_producer ? "true" : "(tsr_pending >> tsr_b) & 1u") << ") {";
  line() << "  tsr_mbar_wait(tsr_bars + tsr_b, (tsr_phase >> tsr_b) & 1u);";
  line() << "  tsr_phase ^= 1u << tsr_b;";
  line() << "  tsr_pending &= ~(1u << tsr_b);";
  line() << "}";
  close();
}

}  // namespace tessera::kir::detail
