// The CUDA emitter's Hopper matrix product (CudaTarget::wgmma): a `dot` of
// f16 or bf16 tiles into an f32 accumulator whose rows are a multiple of 64,
// in a block of a multiple of 128 threads, runs on warpgroup wgmma
// (m64nNk16) with both operands read from shared memory by descriptors,
// instead of mma.sync with ldmatrix (cuda_emitter_mma.cpp).
//
// Operands are in wgmma's core-matrix layout without swizzle
// (interleaved_index: 8x8 blocks of 128 contiguous bytes): A [M][K] K-major;
// B as [N][K] (a transposed block load: K-major) or [K][N] (MN-major). A
// staged block load is copied there by cp.async (the copy's pieces are one
// row of one core matrix); other operands are written there from the
// threads. The accumulator C [M][N] is staged in f32 as for mma.sync.
//
// The result is cut into units of 64 rows by a piece of 64, 32 or 16
// columns, dealt to the warpgroups round-robin: a warpgroup reads its
// unit's accumulator fragment from C (warp w of the group holds rows
// 16w..16w+15), issues one wgmma per 16 of K between wgmma.fence and
// commit as straight-line code (descriptors built before the fence, so that
// ptxas adds no warpgroup fences between them), waits, and writes the
// fragment back. The generic-proxy writes of the operands are fenced for
// the async proxy wgmma reads through (fence.proxy.async) before the barrier.
//
// Staged loads are copied by TMA (cuda_emitter_tma.cpp), the pipelined ones
// by a producer warp (cuda_emitter_producer.cpp). Not yet: the accumulator
// kept in registers across the key loop (FA3), swizzled layouts.
#include <vector>

#include "codegen/kernel/cuda/cuda_emitter_internal.h"

namespace tessera::kir::detail {

bool CudaEmitter::wgmma_fits(const Inst& in) const {
  if (!target_.wgmma || !mma_fits(in)) return false;
  return type(in.operands[0]).shape[0] % 64 == 0 && type(in.operands[1]).shape[1] % 16 == 0 && threads_ % 128 == 0;
}

std::string CudaEmitter::stage_interleaved(ValueId v, int64_t at, Elem as) {
  const Type& t = type(v);
  const int64_t rows = t.shape[0], cols = t.shape[1];
  const std::string p = "tsr_s" + std::to_string(tmp_++);
  shared_bytes_ = std::max(shared_bytes_, at + aligned16(t.numel() * elem_bytes(as)));
  line() << reg_type(as) << "* " << p << " = (" << reg_type(as) << "*)(tsr_sm + " << at << ");";
  open_lanes(t.numel(), true);
  const std::string c = std::to_string(cols);
  line() << p << "[" << interleaved_index("tsr_e / " + c, "tsr_e % " + c, rows)
         << "] = " << cast_expr(name(v) + "[tsr_j]", t.elem, as) << ";";
  close();
  return p;
}

void CudaEmitter::dot_wgmma(const Inst& in) {
  const Type& a = type(in.operands[0]);
  const TensorCoreDot d = stage_tensor_core_dot(in, true);
  const int64_t M = d.M, K = d.K, N = d.N;
  const std::string &sa = d.sa, &sb = d.sb, &sc = d.sc;
  const bool b_k_major = d.b_by_columns;  // B held as [N][K]
  line() << "tsr_fence_proxy_async();";
  barrier();
  // Units: 64 rows by a piece of columns, the widest of 64, 32, 16 that fits.
  struct Unit {
    int64_t m0, n0, width;
  };
  std::vector<Unit> units;
  for (int64_t m0 = 0; m0 < M; m0 += 64)
    for (int64_t n0 = 0; n0 < N;) {
      const int64_t w = N - n0 >= 64 ? 64 : N - n0 >= 32 ? 32 : 16;
      units.push_back({m0, n0, w});
      n0 += w;
    }
  const int groups = threads_ / 128;
  const char* mma = a.elem == Elem::F16 ? "tsr_wgmma_f16" : "tsr_wgmma_bf16";
  line() << "{";
  ++indent_;
  // Thread l of its warpgroup holds rows 16 (l / 32) + (l % 32) / 4 (+ 8)
  // and columns 2 (l % 4) (+ 1) of each 8 of the unit's columns.
  line() << "const int tsr_wg = tsr_t / 128, tsr_gl = tsr_t % 128;";
  line() << "const int tsr_wr = 16 * (tsr_gl / 32) + (tsr_gl % 32) / 4, tsr_wc = 2 * (tsr_gl % 4);";
  for (int g = 0; g < groups; ++g) {
    bool opened = false;
    for (size_t u = static_cast<size_t>(g); u < units.size(); u += static_cast<size_t>(groups)) {
      const Unit& un = units[u];
      if (!opened) {
        line() << "if (tsr_wg == " << g << ") {";
        ++indent_;
        opened = true;
      }
      const int64_t regs = un.width / 2;
      const std::string at = "(" + std::to_string(un.m0) + " + tsr_wr + 8 * ((tsr_i / 2) % 2)) * " + std::to_string(N) +
                             " + " + std::to_string(un.n0) + " + 8 * (tsr_i / 4) + tsr_wc + tsr_i % 2";
      line() << "{";
      ++indent_;
      line() << "float tsr_d[" << regs << "];";
      line() << "#pragma unroll";
      line() << "for (int tsr_i = 0; tsr_i < " << regs << "; ++tsr_i) tsr_d[tsr_i] = " << sc << "[" << at << "];";
      // Descriptors (interleaved_index: core matrices strip by strip of 8
      // columns): A's rows m0.., k 16 ks..; B's columns n0.., k 16 ks...
      for (int64_t ks = 0; ks < K / 16; ++ks) {
        line() << "const unsigned long long tsr_da" << ks << " = tsr_wgmma_desc(" << sa << " + "
               << (2 * ks * (M / 8) + un.m0 / 8) * 64 << ", " << (M / 8) * 128 << ", 128, 0);";
        if (b_k_major)  // [N][K]: LBO to the next 8 of K (a strip), SBO to the next 8 of N
          line() << "const unsigned long long tsr_db" << ks << " = tsr_wgmma_desc(" << sb << " + "
                 << (2 * ks * (N / 8) + un.n0 / 8) * 64 << ", " << (N / 8) * 128 << ", 128, 0);";
        else  // [K][N], MN-major: LBO to the next 8 of K, SBO to the next 8 of N (a strip)
          line() << "const unsigned long long tsr_db" << ks << " = tsr_wgmma_desc(" << sb << " + "
                 << (un.n0 / 8 * (K / 8) + 2 * ks) * 64 << ", 128, " << (K / 8) * 128 << ", 0);";
      }
      line() << "tsr_wgmma_fence();";
      for (int64_t ks = 0; ks < K / 16; ++ks)
        line() << mma << "<" << un.width << ", 0, " << (b_k_major ? 0 : 1) << ">(tsr_d, tsr_da" << ks << ", tsr_db" << ks
               << ", 1);";
      line() << "tsr_wgmma_commit();";
      line() << "tsr_wgmma_wait<0>();";
      line() << "tsr_wgmma_fence_operand(tsr_d);";
      line() << "#pragma unroll";
      line() << "for (int tsr_i = 0; tsr_i < " << regs << "; ++tsr_i) " << sc << "[" << at << "] = tsr_d[tsr_i];";
      close();
    }
    if (opened) close();
  }
  --indent_;
  line() << "}";
  read_back_dot(in, sc);
  // Every consumer has read the producer's buffers (the barrier closing
  // read_back_dot): they are free for the copies two iterations on.
  for (ValueId v : {in.operands[0], in.operands[1]})
    if (auto st = staged_loads_.find(v); st != staged_loads_.end() && st->second.by_producer)
      line() << "if (tsr_t == 0) tsr_mbar_arrive(tsr_bars + " << st->second.empty_now << ");";
}

}  // namespace tessera::kir::detail
