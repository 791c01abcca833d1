// The CUDA emitter's operations that move elements between the threads of
// a block: the operand is written to shared memory by the threads that hold
// it, a barrier, each thread computes the result elements it holds, and a
// barrier frees the staging area for the next operation. Result lanes past
// the tile's end read element 0, so every lane holds a defined value.
#include <climits>
#include <cmath>

#include "codegen/kernel/cuda/cuda_emitter_internal.h"

namespace tessera::kir::detail {
namespace {

// The fold of one reduction, in element order, as C statements over the
// state tsr_acc (the running value), tsr_idx (argmax's index) and
// tsr_have (whether an element was seen): `update(v, i)`.
std::string fold_update(ReduceKind kind, Elem acc, const std::string& v, const std::string& i, const std::string& sfx) {
  const std::string a = "tsr_acc" + sfx, have = "tsr_have" + sfx, idx = "tsr_idx" + sfx;
  switch (kind) {
    case ReduceKind::Sum:
      return elem_is_float(acc) ? a + " += (double)(" + v + ");" : a + " = tsr_iadd(" + a + ", " + v + ");";
    case ReduceKind::Max:
    case ReduceKind::Min: {
      const bool fl = elem_is_float(acc);
      const std::string fn = kind == ReduceKind::Max ? (fl ? "tsr_max" : "tsr_imax") : (fl ? "tsr_min" : "tsr_imin");
      return a + " = " + have + " ? " + fn + "(" + a + ", " + v + ") : " + v + "; " + have + " = true;";
    }
    case ReduceKind::ArgMax:
      // The first NaN, else the first largest (the interpreter's argmax).
      return "if (!" + have + " || (!tsr_isnan((double)" + a + ") && (tsr_isnan((double)(" + v + ")) || (" + v + ") > " +
             a + "))) { " + a + " = " + v + "; " + idx + " = " + i + "; " + have + " = true; }";
  }
  return {};
}

}  // namespace

std::string CudaEmitter::stage(ValueId v, int64_t at, Elem as) {
  const Type& t = type(v);
  const std::string p = "tsr_s" + std::to_string(tmp_++);
  shared_bytes_ = std::max(shared_bytes_, at + aligned16(t.numel() * elem_bytes(as)));
  line() << reg_type(as) << "* " << p << " = (" << reg_type(as) << "*)(tsr_sm + " << at << ");";
  open_lanes(t.numel(), true);
  line() << p << "[tsr_e] = " << cast_expr(name(v) + "[tsr_j]", t.elem, as) << ";";
  close();
  return p;
}

void CudaEmitter::reduce(const Inst& in) {
  const Type& x = type(in.operands[0]);
  const Type& r = type(in.results[0]);
  if (x.elem == Elem::F16 || x.elem == Elem::BF16) fail(std::string("reduce on ") + elem_name(x.elem) + ": cast to f32 first");
  const Elem acc = in.reduce == ReduceKind::Sum ? sum_acc(x.elem) : x.elem;
  if (!r.is_tile()) {
    declare(in.results[0]);
    return reduce_to_scalar(in, acc);
  }
  const std::string src = stage(in.operands[0], 0, x.elem);
  barrier();
  declare(in.results[0]);
  const auto axis = static_cast<size_t>(in.index);
  const int64_t n = x.shape[axis];
  int64_t inner = 1;
  for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  const std::string sfx = std::to_string(tmp_++);
  open_lanes(r.numel(), false);
  line() << "const tsr_i64 tsr_o = tsr_e < " << r.numel() << " ? tsr_e : 0;";
  line() << "const tsr_i64 tsr_base = (tsr_o / " << inner << ") * " << n * inner << " + tsr_o % " << inner << ";";
  line() << reg_type(acc) << " tsr_acc" << sfx << " = 0; tsr_i64 tsr_idx" << sfx << " = 0; bool tsr_have" << sfx
         << " = false;";
  line() << "(void)tsr_idx" << sfx << "; (void)tsr_have" << sfx << ";";
  line() << "for (tsr_i64 tsr_i = 0; tsr_i < " << n << "; ++tsr_i) { "
         << fold_update(in.reduce, acc, src + "[tsr_base + tsr_i * " + std::to_string(inner) + "]", "tsr_i", sfx) << " }";
  const std::string value = in.reduce == ReduceKind::ArgMax ? "tsr_idx" + sfx : "tsr_acc" + sfx;
  line() << name(in.results[0]) << "[tsr_j] = " << cast_expr(value, in.reduce == ReduceKind::ArgMax ? Elem::I64 : acc, r.elem)
         << ";";
  close();
  barrier();  // the staging area is free again
}

// A 1-D tile to a scalar, without staging the tile: each thread folds the
// elements it holds, the warp's threads combine theirs with shuffles, lane 0
// of each warp puts the warp's result in shared memory, and every thread
// combines the warps' results in order. The combining steps (tessera_cuda.h)
// give the interpreter's result whatever order partial results meet in:
// argmax takes the first NaN, else the largest value with the smallest
// index; max and min propagate NaN; sums accumulate in double. Empty
// threads hold the identity (argmax: the lowest value at index INT64_MAX).
void CudaEmitter::reduce_to_scalar(const Inst& in, Elem acc) {
  const Type& x = type(in.operands[0]);
  const int64_t n = x.numel();
  const bool arg = in.reduce == ReduceKind::ArgMax;
  const std::string sfx = std::to_string(tmp_++);
  const std::string a = "tsr_acc" + sfx, idx = "tsr_idx" + sfx, T = reg_type(acc);
  const int warps = threads_ / 32;
  std::string identity, merge;
  const bool fl = elem_is_float(acc);
  const std::string lowest = fl ? float_literal(-INFINITY, acc) : int_literal(acc == Elem::I32 ? INT32_MIN : INT64_MIN, acc);
  const std::string highest = fl ? float_literal(INFINITY, acc) : int_literal(acc == Elem::I32 ? INT32_MAX : INT64_MAX, acc);
  switch (in.reduce) {
    case ReduceKind::Sum: identity = "0"; break;
    case ReduceKind::Max: identity = lowest; break;
    case ReduceKind::Min: identity = highest; break;
    case ReduceKind::ArgMax: identity = lowest; break;
  }
  // merge(b, ib): fold a partial result into (a, idx).
  const auto merge_with = [&](const std::string& b, const std::string& ib) -> std::string {
    switch (in.reduce) {
      case ReduceKind::Sum: return fl ? a + " += " + b + ";" : a + " = tsr_iadd(" + a + ", " + b + ");";
      case ReduceKind::Max: return a + " = " + (fl ? "tsr_max(" : "tsr_imax(") + a + ", " + b + ");";
      case ReduceKind::Min: return a + " = " + (fl ? "tsr_min(" : "tsr_imin(") + a + ", " + b + ");";
      case ReduceKind::ArgMax: return "tsr_argmax_merge(" + a + ", " + idx + ", " + b + ", " + ib + ");";
    }
    return {};
  };
  line() << "{";
  ++indent_;
  line() << T << " " << a << " = " << identity << "; tsr_i64 " << idx << " = 9223372036854775807LL; (void)" << idx << ";";
  open_lanes(n, true);
  line() << merge_with(cast_expr(name(in.operands[0]) + "[tsr_j]", x.elem, acc), "tsr_e");
  close();
  line() << "for (int tsr_m = 16; tsr_m >= 1; tsr_m /= 2) {";
  ++indent_;
  line() << "const " << T << " tsr_b = tsr_shfl_xor(" << a << ", tsr_m);";
  if (arg) line() << "const tsr_i64 tsr_ib = tsr_shfl_xor(" << idx << ", tsr_m);";
  line() << merge_with("tsr_b", arg ? "tsr_ib" : "0");
  close();
  const int64_t idx_at = aligned16(static_cast<int64_t>(warps) * 8);
  shared_bytes_ = std::max(shared_bytes_, idx_at + aligned16(static_cast<int64_t>(warps) * 8));
  line() << T << "* tsr_pa" << sfx << " = (" << T << "*)tsr_sm;";
  line() << "tsr_i64* tsr_pi" << sfx << " = (tsr_i64*)(tsr_sm + " << idx_at << ");";
  line() << "if (tsr_t % 32 == 0) { tsr_pa" << sfx << "[tsr_t / 32] = " << a << "; tsr_pi" << sfx << "[tsr_t / 32] = " << idx
         << "; }";
  barrier();
  line() << a << " = " << identity << "; " << idx << " = 9223372036854775807LL;";
  line() << "for (int tsr_w = 0; tsr_w < " << warps << "; ++tsr_w) { "
         << merge_with("tsr_pa" + sfx + "[tsr_w]", "tsr_pi" + sfx + "[tsr_w]") << " }";
  barrier();  // the warps' results are read before the area is used again
  line() << name(in.results[0]) << " = " << cast_expr(arg ? idx : a, arg ? Elem::I64 : acc, type(in.results[0]).elem) << ";";
  --indent_;
  line() << "}";
}

void CudaEmitter::broadcast(const Inst& in) {
  const Type& r = type(in.results[0]);
  const auto axis = static_cast<size_t>(in.index);
  int64_t inner = 1;
  for (size_t d = axis + 1; d < r.shape.size(); ++d) inner *= r.shape[d];
  const int64_t n = r.shape[axis];
  const std::string src = stage(in.operands[0], 0, r.elem);
  barrier();
  declare(in.results[0]);
  open_lanes(r.numel(), false);
  line() << "const tsr_i64 tsr_o = tsr_e < " << r.numel() << " ? tsr_e : 0;";
  line() << name(in.results[0]) << "[tsr_j] = " << src << "[(tsr_o / " << n * inner << ") * " << inner << " + tsr_o % "
         << inner << "];";
  close();
  barrier();
}

void CudaEmitter::trans(const Inst& in) {
  const Type& r = type(in.results[0]);  // [b, a] of an [a, b] operand
  const int64_t a = r.shape[1], b = r.shape[0];
  const std::string src = stage(in.operands[0], 0, r.elem);
  barrier();
  declare(in.results[0]);
  open_lanes(r.numel(), false);
  line() << "const tsr_i64 tsr_o = tsr_e < " << r.numel() << " ? tsr_e : 0;";
  line() << name(in.results[0]) << "[tsr_j] = " << src << "[(tsr_o % " << a << ") * " << b << " + tsr_o / " << a << "];";
  close();
  barrier();
}

// c + a b, one result element per lane, products summed over k in order
// (in f32, or f64 for an f64 accumulator); half-precision operands are
// widened to f32 as they are staged.
void CudaEmitter::dot(const Inst& in) {
  if (wgmma_fits(in)) return dot_wgmma(in);
  if (mma_fits(in)) return dot_mma(in);
  const Type& a = type(in.operands[0]);
  const Type& b = type(in.operands[1]);
  const Type& c = type(in.operands[2]);
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  const std::string sa = stage(in.operands[0], 0, Elem::F32);
  const std::string sb = stage(in.operands[1], aligned16(M * K * 4), Elem::F32);
  barrier();
  declare(in.results[0]);
  open_lanes(c.numel(), false);
  line() << "const tsr_i64 tsr_o = tsr_e < " << c.numel() << " ? tsr_e : 0;";
  line() << "const tsr_i64 tsr_m = tsr_o / " << N << ", tsr_n = tsr_o % " << N << ";";
  const char* acc = reg_type(c.elem == Elem::F64 ? Elem::F64 : Elem::F32);
  line() << acc << " tsr_d = " << cast_expr(name(in.operands[2]) + "[tsr_j]", c.elem, c.elem == Elem::F64 ? Elem::F64 : Elem::F32)
         << ";";
  line() << "for (tsr_i64 tsr_k = 0; tsr_k < " << K << "; ++tsr_k) tsr_d += (" << acc << ")" << sa << "[tsr_m * " << K
         << " + tsr_k] * (" << acc << ")" << sb << "[tsr_k * " << N << " + tsr_n];";
  line() << name(in.results[0]) << "[tsr_j] = " << cast_expr("tsr_d", c.elem == Elem::F64 ? Elem::F64 : Elem::F32, c.elem)
         << ";";
  close();
  barrier();
}

}  // namespace tessera::kir::detail
