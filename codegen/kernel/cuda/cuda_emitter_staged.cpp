// The CUDA emitter's operations that move elements between the threads of
// a block: the operand is written to shared memory by the threads that hold
// it, a barrier, each thread computes the result elements it holds, and a
// barrier frees the staging area for the next operation. Result lanes past
// the tile's end read element 0, so every lane holds a defined value.
#include "codegen/kernel/cuda/cuda_emitter_internal.h"

namespace tessera::kir::detail {
namespace {

int64_t elem_bytes(Elem e) {
  static constexpr int64_t kBytes[] = {1, 4, 8, 2, 2, 4, 8};
  return kBytes[static_cast<size_t>(e)];
}

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

int64_t CudaEmitter::reserve(int64_t bytes) {
  const int64_t rounded = (bytes + 15) / 16 * 16;
  return rounded;
}

std::string CudaEmitter::stage(ValueId v, int64_t at, Elem as) {
  const Type& t = type(v);
  const std::string p = "tsr_s" + std::to_string(tmp_++);
  shared_bytes_ = std::max(shared_bytes_, at + reserve(t.numel() * elem_bytes(as)));
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
  const std::string src = stage(in.operands[0], 0, x.elem);
  barrier();
  declare(in.results[0]);
  if (!r.is_tile()) {
    reduce_to_scalar(in, src, acc);
  } else {
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
  }
  barrier();  // the staging area is free again
}

// A 1-D tile to a scalar: thread t folds the contiguous chunk
// [t C, (t + 1) C) of the staged tile, the chunks' results go to shared
// memory after it, and every thread folds them in order: the sequential
// fold's result for extremes and argmax, a two-level sum in double.
void CudaEmitter::reduce_to_scalar(const Inst& in, const std::string& src, Elem acc) {
  const Type& x = type(in.operands[0]);
  const int64_t n = x.numel();
  const int64_t chunk = per_thread(n);
  const std::string sfx = std::to_string(tmp_++);
  const std::string a = "tsr_acc" + sfx, idx = "tsr_idx" + sfx, have = "tsr_have" + sfx;
  const int64_t at = reserve(n * elem_bytes(x.elem));
  const int64_t acc_bytes = 8;  // room for any accumulator
  const int64_t idx_at = at + reserve(threads_ * acc_bytes), have_at = idx_at + reserve(threads_ * 8);
  shared_bytes_ = std::max(shared_bytes_, have_at + reserve(threads_));
  line() << "{";
  ++indent_;
  line() << reg_type(acc) << " " << a << " = 0; tsr_i64 " << idx << " = 0; bool " << have << " = false;";
  line() << "for (tsr_i64 tsr_i = (tsr_i64)tsr_t * " << chunk << "; tsr_i < " << n << " && tsr_i < ((tsr_i64)tsr_t + 1) * "
         << chunk << "; ++tsr_i) { " << fold_update(in.reduce, acc, src + "[tsr_i]", "tsr_i", sfx) << " }";
  line() << reg_type(acc) << "* tsr_pa" << sfx << " = (" << reg_type(acc) << "*)(tsr_sm + " << at << ");";
  line() << "tsr_i64* tsr_pi" << sfx << " = (tsr_i64*)(tsr_sm + " << idx_at << ");";
  line() << "bool* tsr_ph" << sfx << " = (bool*)(tsr_sm + " << have_at << ");";
  line() << "tsr_pa" << sfx << "[tsr_t] = " << a << "; tsr_pi" << sfx << "[tsr_t] = " << idx << "; tsr_ph" << sfx
         << "[tsr_t] = " << (in.reduce == ReduceKind::Sum ? "true" : have) << ";";
  barrier();
  line() << a << " = 0; " << idx << " = 0; " << have << " = false;";
  line() << "for (int tsr_c = 0; tsr_c < " << threads_ << "; ++tsr_c) if (tsr_ph" << sfx << "[tsr_c]) { "
         << fold_update(in.reduce, acc, "tsr_pa" + sfx + "[tsr_c]", "tsr_pi" + sfx + "[tsr_c]", sfx) << " }";
  const Elem r = type(in.results[0]).elem;
  line() << name(in.results[0]) << " = "
         << cast_expr(in.reduce == ReduceKind::ArgMax ? idx : a, in.reduce == ReduceKind::ArgMax ? Elem::I64 : acc, r) << ";";
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
  const Type& a = type(in.operands[0]);
  const Type& b = type(in.operands[1]);
  const Type& c = type(in.operands[2]);
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  const std::string sa = stage(in.operands[0], 0, Elem::F32);
  const std::string sb = stage(in.operands[1], reserve(M * K * 4), Elem::F32);
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
