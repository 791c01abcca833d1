// The CUDA emitter's tensor-core matrix product: a `dot` of f16 or bf16
// tiles into an f32 accumulator, whose shapes are whole m16n8k16 tiles,
// runs on mma.sync instead of one CUDA-core product per result element.
//
// The operands arrive spread over the block's threads (the emitter's one
// layout, cuda_emitter.h), so they are staged in shared memory as halves
// (A [M][K] and B [K][N], row-major) with the accumulator C [M][N] in f32.
// The 16x8 result tiles are dealt to the warps round-robin; a warp takes
// A's fragment with ldmatrix.x4 and B's with ldmatrix.x2.trans (B's rows
// are k, the fragment wants k along its columns), walks k in steps of 16
// with one mma each, and writes its tile of D over C's in place (each tile
// is read and written by one warp only). After a barrier every thread
// reads back the result elements it holds.
//
// The warp-collective wrappers (tessera_cuda.h) are called by every thread
// of the block the same number of times, as the host emulation runs them
// between block-wide barriers: a warp with no tile left in the last round
// computes a tile again and does not write it.
#include "codegen/kernel/cuda/cuda_emitter_internal.h"

namespace tessera::kir::detail {

bool CudaEmitter::mma_fits(const Inst& in) const {
  const Type& a = type(in.operands[0]);
  const Type& b = type(in.operands[1]);
  const Type& c = type(in.operands[2]);
  const bool half = a.elem == Elem::F16 || a.elem == Elem::BF16;
  return half && c.elem == Elem::F32 && a.shape[0] % 16 == 0 && a.shape[1] % 16 == 0 && b.shape[1] % 8 == 0;
}

void CudaEmitter::dot_mma(const Inst& in) {
  const Type& a = type(in.operands[0]);
  const Type& b = type(in.operands[1]);
  const Type& c = type(in.operands[2]);
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  const int64_t a_bytes = aligned16(M * K * 2), b_bytes = aligned16(K * N * 2);
  const std::string sa = stage(in.operands[0], 0, a.elem);
  const std::string sb = stage(in.operands[1], a_bytes, a.elem);
  const std::string sc = stage(in.operands[2], a_bytes + b_bytes, Elem::F32);
  barrier();
  const int warps = threads_ / 32;
  const int64_t tiles = (M / 16) * (N / 8), rounds = (tiles + warps - 1) / warps;
  const char* mma = a.elem == Elem::F16 ? "tsr_mma_f16" : "tsr_mma_bf16";
  line() << "{";
  ++indent_;
  line() << "const int tsr_lane = tsr_t % 32, tsr_warp = tsr_t / 32;";
  line() << "for (int tsr_r = 0; tsr_r < " << rounds << "; ++tsr_r) {";
  ++indent_;
  line() << "const int tsr_want = tsr_r * " << warps << " + tsr_warp;";
  line() << "const int tsr_tile = tsr_want < " << tiles << " ? tsr_want : " << tiles - 1 << ";";
  line() << "const int tsr_m0 = (tsr_tile / " << N / 8 << ") * 16, tsr_n0 = (tsr_tile % " << N / 8 << ") * 8;";
  // C's fragment: rows lane/4 and lane/4 + 8, columns 2 (lane % 4) and the next.
  line() << "const int tsr_cr = tsr_m0 + tsr_lane / 4, tsr_cc = tsr_n0 + 2 * (tsr_lane % 4);";
  line() << "float tsr_acc[4] = {" << sc << "[tsr_cr * " << N << " + tsr_cc], " << sc << "[tsr_cr * " << N
         << " + tsr_cc + 1], " << sc << "[(tsr_cr + 8) * " << N << " + tsr_cc], " << sc << "[(tsr_cr + 8) * " << N
         << " + tsr_cc + 1]};";
  line() << "for (int tsr_k0 = 0; tsr_k0 < " << K << "; tsr_k0 += 16) {";
  ++indent_;
  // ldmatrix: lane l gives row l % 8 of 8x8 matrix l / 8. A's four are
  // (rows 0-7, 8-15) x (k 0-7, 8-15) in the order of the fragment's
  // registers; B's two are k 0-7 and 8-15 of its 8 columns.
  line() << "unsigned tsr_fa[4], tsr_fb[2];";
  line() << "tsr_ldmatrix_x4(tsr_fa, " << sa << " + (tsr_m0 + tsr_lane % 16) * " << K << " + tsr_k0 + (tsr_lane / 16) * 8);";
  line() << "tsr_ldmatrix_x2_trans(tsr_fb, " << sb << " + (tsr_k0 + tsr_lane % 16) * " << N << " + tsr_n0);";
  line() << mma << "(tsr_acc, tsr_fa, tsr_fb, tsr_acc);";
  close();
  line() << "if (tsr_want < " << tiles << ") {";
  ++indent_;
  line() << sc << "[tsr_cr * " << N << " + tsr_cc] = tsr_acc[0]; " << sc << "[tsr_cr * " << N
         << " + tsr_cc + 1] = tsr_acc[1];";
  line() << sc << "[(tsr_cr + 8) * " << N << " + tsr_cc] = tsr_acc[2]; " << sc << "[(tsr_cr + 8) * " << N
         << " + tsr_cc + 1] = tsr_acc[3];";
  close();
  close();
  --indent_;
  line() << "}";
  barrier();
  declare(in.results[0]);
  open_lanes(c.numel(), false);
  line() << name(in.results[0]) << "[tsr_j] = " << sc << "[tsr_e < " << c.numel() << " ? tsr_e : 0];";
  close();
  barrier();  // the staging area is free again
}

}  // namespace tessera::kir::detail
