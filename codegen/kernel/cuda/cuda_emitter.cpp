// Kernel IR → CUDA C++: the walk over the kernel (cuda_emitter.h has the
// design note).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

#include "codegen/kernel/cuda/cuda_emitter_internal.h"
#include "codegen/kernel/kernel_verify.h"

namespace tessera::kir {
namespace detail {
namespace {

// How an elementwise operation is spelled, per element kind: $0 $1 $2 are
// the operands; null: not defined there (the verifier refuses it, or the
// lowering never makes it).
struct OpForm {
  KOp op;
  const char* f32;
  const char* f64;
  const char* integer;
};

constexpr OpForm kOpForms[] = {
#define TESSERA_UNARY(Name, name, display, builtin, keeps, kflags, fmath, sleef, scalar, vector, f32, f64, i, doc) \
    {KOp::Name, f32, f64, i},
#define TESSERA_BINARY(...)
#include "vm/tensor/elementwise_ops.def"
#undef TESSERA_UNARY
#undef TESSERA_BINARY
    {KOp::Exp2, "tsr_exp2f($0)", nullptr, nullptr},
    {KOp::Add, "($0 + $1)", "($0 + $1)", "tsr_iadd($0, $1)"},
    {KOp::Sub, "($0 - $1)", "($0 - $1)", "tsr_isub($0, $1)"},
    {KOp::Mul, "($0 * $1)", "($0 * $1)", "tsr_imul($0, $1)"},
    {KOp::Div, "($0 / $1)", "($0 / $1)", "tsr_idiv($0, $1)"},
    {KOp::Rem, nullptr, nullptr, "tsr_irem($0, $1)"},
    {KOp::Min, "tsr_min($0, $1)", "tsr_min($0, $1)", "tsr_imin($0, $1)"},
    {KOp::Max, "tsr_max($0, $1)", "tsr_max($0, $1)", "tsr_imax($0, $1)"},
    {KOp::Pow, "tsr_powf($0, $1)", nullptr, nullptr},
    {KOp::Select, "($0 ? $1 : $2)", "($0 ? $1 : $2)", "($0 ? $1 : $2)"},
};

// Comparison operators by Pred; C's != is unordered (true for NaN), the
// others ordered, as the CPU emitter's predicates.
constexpr const char* kPredOps[] = {"==", "!=", "<", "<=", ">", ">="};

const OpForm* form_of(KOp op) {
  for (const OpForm& f : kOpForms)
    if (f.op == op) return &f;
  return nullptr;
}

std::string substitute(const char* form, const std::vector<std::string>& xs) {
  std::string s;
  for (const char* p = form; *p; ++p) {
    if (*p == '$' && p[1] >= '0' && p[1] <= '9') {
      s += xs.at(static_cast<size_t>(p[1] - '0'));
      ++p;
    } else {
      s += *p;
    }
  }
  return s;
}

int64_t max_tile(const Kernel& k) {
  int64_t n = 1;
  for (size_t v = 0; v < k.num_values(); ++v)
    if (k.value(static_cast<ValueId>(v)).type.is_tile()) n = std::max(n, k.value(static_cast<ValueId>(v)).type.numel());
  return n;
}

}  // namespace

const char* CudaEmitter::reg_type(Elem e) {
  static constexpr const char* kNames[] = {"bool", "int", "tsr_i64", "unsigned short", "unsigned short", "float", "double"};
  return kNames[static_cast<size_t>(e)];
}

const char* CudaEmitter::mem_type(Elem e) { return e == Elem::I1 ? "unsigned char" : reg_type(e); }

const std::string& CudaEmitter::name(ValueId v) {
  auto it = names_.find(v);
  if (it != names_.end()) return it->second;
  return names_[v] = "v" + std::to_string(v);
}

std::ostringstream& CudaEmitter::line() {
  out_ << "\n" << std::string(static_cast<size_t>(2 * indent_), ' ');
  return out_;
}

void CudaEmitter::open_lanes(int64_t n, bool guarded) {
  line() << "#pragma unroll";
  line() << "for (int tsr_j = 0; tsr_j < " << per_thread(n) << "; ++tsr_j) {";
  ++indent_;
  line() << "const tsr_i64 tsr_e = tsr_t + (tsr_i64)tsr_j * " << threads_ << ";";
  line() << "(void)tsr_e;";
  if (guarded && n % threads_ != 0) line() << "if (tsr_e >= " << n << ") continue;";
}

void CudaEmitter::declare(ValueId v) {
  const Type& t = type(v);
  if (t.is_tile()) line() << reg_type(t.elem) << " " << name(v) << "[" << per_thread(t.numel()) << "];";
  else line() << reg_type(t.elem) << " " << name(v) << ";";
}

std::string CudaEmitter::float_literal(double v, Elem e) const {
  char buf[64];
  if (e == Elem::F64) {
    if (!std::isfinite(v)) {
      uint64_t u;
      std::memcpy(&u, &v, 8);
      std::snprintf(buf, sizeof buf, "tsr_bits_f64(0x%016llxull)", static_cast<unsigned long long>(u));
    } else {
      std::snprintf(buf, sizeof buf, "%a", v);
    }
    return buf;
  }
  const float f = static_cast<float>(v);
  if (!std::isfinite(f)) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    std::snprintf(buf, sizeof buf, "tsr_bits_f32(0x%08xu)", u);
  } else {
    std::snprintf(buf, sizeof buf, "%af", static_cast<double>(f));
  }
  std::string s = buf;
  if (e == Elem::F16) return "tsr_f32_to_f16(" + s + ")";
  if (e == Elem::BF16) return "tsr_f32_to_bf16(" + s + ")";
  return s;
}

std::string CudaEmitter::int_literal(int64_t v, Elem e) const {
  if (e == Elem::I1) return v ? "true" : "false";
  if (e == Elem::I32) return "(int)" + std::to_string(static_cast<int32_t>(v));
  if (v == INT64_MIN) return "(-9223372036854775807LL - 1)";
  return "(tsr_i64)" + std::to_string(v) + "LL";
}

// Conversions with the interpreter's semantics (the CPU emitter's cast):
// half precision through f32, float to int saturating with NaN to 0, to i1
// as "not zero", f64 rounded once to f32.
std::string CudaEmitter::cast_expr(const std::string& x, Elem from, Elem to) const {
  if (from == to) return x;
  std::string f = x;
  if (from == Elem::BF16) f = "tsr_bf16_to_f32(" + x + ")", from = Elem::F32;
  else if (from == Elem::F16) f = "tsr_f16_to_f32(" + x + ")", from = Elem::F32;
  if (from == to) return f;
  if (to == Elem::F64) return from == Elem::I1 ? "(" + f + " ? 1.0 : 0.0)" : "(double)(" + f + ")";
  if (from == Elem::F64) {
    if (to == Elem::I1) return "(" + f + " != 0.0)";
    if (to == Elem::I64) return "tsr_f2i64(" + f + ")";
    if (to == Elem::I32) return "tsr_f2i32(" + f + ")";
    f = "(float)(" + f + ")", from = Elem::F32;
    if (to == Elem::F32) return f;
  }
  if (elem_is_float(to)) {
    if (from == Elem::I1) f = "(" + f + " ? 1.0f : 0.0f)";
    else if (from != Elem::F32) f = "(float)(" + f + ")";
    if (to == Elem::F32) return f;
    return to == Elem::F16 ? "tsr_f32_to_f16(" + f + ")" : "tsr_f32_to_bf16(" + f + ")";
  }
  if (to == Elem::I1) return "(" + f + " != 0)";
  if (from == Elem::F32) return to == Elem::I64 ? "tsr_f2i64((double)" + f + ")" : "tsr_f2i32((double)" + f + ")";
  if (from == Elem::I1) return "(" + std::string(reg_type(to)) + ")(" + f + " ? 1 : 0)";
  return "(" + std::string(reg_type(to)) + ")(" + f + ")";
}

std::string CudaEmitter::elementwise_expr(const Inst& in, const std::vector<std::string>& xs) {
  const Elem e = type(in.operands[in.op == KOp::Select ? 1 : 0]).elem;
  if (in.op == KOp::Cast) return cast_expr(xs[0], type(in.operands[0]).elem, type(in.results[0]).elem);
  if ((e == Elem::F16 || e == Elem::BF16) && in.op != KOp::Select)
    fail(std::string(op_info(in.op).name) + " on " + elem_name(e) + ": cast to f32 first");
  if (in.op == KOp::Cmp) return "(" + xs[0] + " " + kPredOps[static_cast<size_t>(in.pred)] + " " + xs[1] + ")";
  const OpForm* f = form_of(in.op);
  const char* form = !f ? nullptr : e == Elem::F64 ? f->f64 : elem_is_float(e) || e == Elem::F16 || e == Elem::BF16 ? f->f32
                                                                                                                     : f->integer;
  if (!form) fail(std::string("no CUDA form of ") + op_info(in.op).name + " on " + elem_name(e));
  return substitute(form, xs);
}

// ------------------------------------------------------------ instructions

void CudaEmitter::block(const Block& b) {
  for (const Inst& in : b.insts) inst(in);
}

void CudaEmitter::inst(const Inst& in) {
  const KShape shape = op_info(in.op).shape;
  if (is_elementwise(shape)) return elementwise(in);
  const auto result = [&]() -> const std::string& { return name(in.results[0]); };
  switch (shape) {
    case KShape::Const: {
      const Elem e = type(in.results[0]).elem;
      declare(in.results[0]);
      line() << result() << " = " << (elem_is_float(e) ? float_literal(in.fvalue, e) : int_literal(in.ivalue, e)) << ";";
      return;
    }
    case KShape::Dim: line() << "const tsr_i64 " << result() << " = tsr_dim" << in.index << ";"; return;
    case KShape::ProgramId: line() << "const tsr_i64 " << result() << " = tsr_pid" << in.index << ";"; return;
    case KShape::Range: {
      declare(in.results[0]);
      open_lanes(type(in.results[0]).numel(), false);
      line() << result() << "[tsr_j] = tsr_e;";
      close();
      return;
    }
    case KShape::Splat: {
      declare(in.results[0]);
      open_lanes(type(in.results[0]).numel(), false);
      line() << result() << "[tsr_j] = " << name(in.operands[0]) << ";";
      close();
      return;
    }
    case KShape::Load: return load(in);
    case KShape::BlockLoad:
      // A load a tensor-core dot reads is copied into shared memory (cuda_emitter_mma.cpp).
      return staged_loads_.count(in.results[0]) ? stage_block_load(in) : block_load(in);
    case KShape::Store: return store(in);
    case KShape::Reduce: return reduce(in);
    case KShape::Broadcast: return broadcast(in);
    case KShape::Trans: return trans(in);
    case KShape::Dot: return dot(in);
    case KShape::For: return for_loop(in);
    default: fail(std::string("no CUDA form of ") + op_info(in.op).name);
  }
}

void CudaEmitter::elementwise(const Inst& in) {
  const ValueId r = in.results[0];
  const bool tile = type(r).is_tile();
  declare(r);
  if (tile) open_lanes(type(r).numel(), false);
  std::vector<std::string> xs;
  for (ValueId o : in.operands) xs.push_back(at(o, tile));
  line() << at(r, tile) << " = " << elementwise_expr(in, xs) << ";";
  if (tile) close();
}

void CudaEmitter::load(const Inst& in) {
  const ValueId r = in.results[0];
  const Param& p = k_.params.at(static_cast<size_t>(in.index));
  const bool tile = type(r).is_tile();
  const bool by_value = static_cast<size_t>(in.index) < target_.by_value.size() && target_.by_value[in.index];
  const std::string param = "tsr_p" + std::to_string(in.index);
  // What another thread of this program stored there is visible after a barrier.
  if (p.output) barrier();
  declare(r);
  if (tile) open_lanes(type(r).numel(), false);
  std::string value;
  if (by_value) value = p.elem == Elem::I1 ? "(" + param + " != 0)" : param;
  else if (p.elem == Elem::I1) value = "(" + param + "[" + at(in.operands[0], tile) + "] != 0)";
  else value = param + "[" + at(in.operands[0], tile) + "]";
  std::string cond = tile ? "tsr_e < " + std::to_string(type(r).numel()) : "";
  if (in.operands.size() > 1) cond += (cond.empty() ? "" : " && ") + at(in.operands[1], tile);
  const std::string other = in.operands.size() > 2 ? at(in.operands[2], tile) : std::string("0");
  if (cond.empty()) line() << at(r, tile) << " = " << value << ";";
  else line() << at(r, tile) << " = (" << cond << ") ? (" << reg_type(p.elem) << ")" << value << " : (" << reg_type(p.elem)
              << ")" << other << ";";
  if (tile) close();
  if (p.output) barrier();  // no thread overwrites it before every thread has read it
}

// Each lane's element at its row and column of the matrix, zero outside;
// the addresses are computed per element, not kept as tiles of offsets.
void CudaEmitter::block_load(const Inst& in) {
  const ValueId r = in.results[0];
  const Param& p = k_.params.at(static_cast<size_t>(in.index));
  const int64_t cols = type(r).shape[1];
  const std::string param = "tsr_p" + std::to_string(in.index);
  auto op = [&](size_t i) { return name(in.operands[i]); };
  if (p.output) barrier();
  declare(r);
  open_lanes(type(r).numel(), false);
  line() << "const tsr_i64 tsr_i = tsr_e / " << cols << ", tsr_c = tsr_e % " << cols << ";";
  line() << "const tsr_i64 tsr_mr = " << op(1) << " + " << (in.transposed ? "tsr_c" : "tsr_i") << ", tsr_mc = " << op(2)
         << " + " << (in.transposed ? "tsr_i" : "tsr_c") << ";";
  const std::string value = param + "[" + op(0) + " + tsr_mr * " + op(5) + " + tsr_mc]";
  line() << name(r) << "[tsr_j] = (tsr_e < " << type(r).numel() << " && tsr_mr < " << op(3) << " && tsr_mc < " << op(4)
         << ") ? (" << reg_type(p.elem) << ")" << (p.elem == Elem::I1 ? "(" + value + " != 0)" : value) << " : ("
         << reg_type(p.elem) << ")0;";
  close();
  if (p.output) barrier();
}

void CudaEmitter::store(const Inst& in) {
  const Param& p = k_.params.at(static_cast<size_t>(in.index));
  const ValueId v = in.operands[1];
  const bool tile = type(v).is_tile();
  const std::string param = "tsr_p" + std::to_string(in.index);
  if (tile) open_lanes(type(v).numel(), true);
  std::string cond = tile ? "" : "tsr_t == 0";  // a scalar is stored once
  if (in.operands.size() > 2) cond += (cond.empty() ? "" : " && ") + at(in.operands[2], tile);
  const std::string value = p.elem == Elem::I1 ? "(unsigned char)(" + at(v, tile) + " ? 1 : 0)" : at(v, tile);
  const std::string st = param + "[" + at(in.operands[0], tile) + "] = " + value + ";";
  if (cond.empty()) line() << st;
  else line() << "if (" << cond << ") " << st;
  if (tile) close();
}

void CudaEmitter::copy(const std::string& to, const std::string& from, const Type& t) {
  if (!t.is_tile()) {
    line() << to << " = " << from << ";";
    return;
  }
  line() << "for (int tsr_j = 0; tsr_j < " << per_thread(t.numel()) << "; ++tsr_j) " << to << "[tsr_j] = " << from
         << "[tsr_j];";
}

// for iv = lo to hi step step: the loop-carried values are variables named
// after the body's args, which the loop's results then name too; yield
// assigns through temporaries (a next value may read another carried one).
void CudaEmitter::for_loop(const Inst& in) {
  const Block& body = *in.body;
  const size_t carried = in.operands.size() - 3;
  for (size_t i = 0; i < carried; ++i) {
    const ValueId arg = body.args[i + 1];
    declare(arg);
    copy(name(arg), name(in.operands[3 + i]), type(arg));
    names_[in.results[i]] = name(arg);
  }
  start_pipelines(in);
  const std::string& iv = name(body.args[0]);
  line() << "for (tsr_i64 " << iv << " = " << name(in.operands[0]) << "; " << iv << " < " << name(in.operands[1]) << "; "
         << iv << " += " << name(in.operands[2]) << ") {";
  ++indent_;
  for (const Inst& b : body.insts) {
    if (b.op != KOp::Yield) {
      inst(b);
      continue;
    }
    std::vector<std::string> tmps;
    for (size_t i = 0; i < b.operands.size(); ++i) {
      const Type& t = type(b.operands[i]);
      tmps.push_back("tsr_next" + std::to_string(tmp_++));
      if (t.is_tile()) line() << reg_type(t.elem) << " " << tmps.back() << "[" << per_thread(t.numel()) << "];";
      else line() << reg_type(t.elem) << " " << tmps.back() << ";";
      copy(tmps.back(), name(b.operands[i]), t);
    }
    for (size_t i = 0; i < b.operands.size(); ++i) copy(name(body.args[i + 1]), tmps[i], type(b.operands[i]));
  }
  if (auto it = iteration_.find(&in); it != iteration_.end()) line() << "++" << it->second << ";";
  close();
  // The copies the last iteration started for an iteration that does not
  // come land before anything else is waited for.
  if (std::any_of(inflight_.begin(), inflight_.end(), [](const InFlight& f) { return f.next; })) {
    line() << "tsr_cp_async_wait<0>();";
    inflight_.clear();
  }
}

// ------------------------------------------------------------ the kernel

CudaKernelSource CudaEmitter::run(const std::string& entry) {
  if (auto errors = verify(k_); !errors.empty())
    throw std::invalid_argument("cuda emitter: kernel @" + k_.name + " does not verify: " + errors.front());
  const int64_t biggest = max_tile(k_);
  threads_ = target_.threads > 0 ? target_.threads : static_cast<int>(std::clamp<int64_t>((biggest + 31) / 32 * 32, 32, 256));
  if (threads_ % 32 != 0 || threads_ > 1024) fail("threads per block must be a multiple of 32 up to 1024");
  if (per_thread(biggest) > kCudaMaxElemsPerThread)
    fail("a tile of " + std::to_string(biggest) + " elements is more than " + std::to_string(kCudaMaxElemsPerThread) +
         " per thread in blocks of " + std::to_string(threads_) + " threads");

  CudaKernelSource src;
  src.entry = entry;
  plan_staged_loads();
  plan_producer();
  src.threads = threads_ + (producer_loop_ ? producer_threads_ : 0);
  // The signature, and the argument list the launchers follow.
  std::ostringstream sig, call;
  for (size_t p = 0; p < k_.params.size(); ++p) {
    const Param& prm = k_.params[p];
    const bool by_value = p < target_.by_value.size() && target_.by_value[p];
    if (by_value && (prm.output || !prm.shape.empty())) fail("param %" + prm.name + " passed by value is not a 0-d input");
    if (p) sig << ", ", call << ", ";
    const std::string pn = "tsr_p" + std::to_string(p);
    if (by_value) {
      sig << mem_type(prm.elem) << " " << pn;
      call << "*(" << mem_type(prm.elem) << "*)tsr_a[" << src.args.size() << "]";
      src.args.push_back({CudaArgKind::Value, static_cast<int>(p), prm.elem, 0, {}});
    } else {
      sig << (prm.output ? "" : "const ") << mem_type(prm.elem) << "* __restrict__ " << pn;
      call << "*(" << (prm.output ? "" : "const ") << mem_type(prm.elem) << "**)tsr_a[" << src.args.size() << "]";
      src.args.push_back({CudaArgKind::Pointer, static_cast<int>(p), prm.elem, 0, {}});
    }
  }
  for (size_t m = 0; m < maps_.size(); ++m) {
    const Param& prm = k_.params[static_cast<size_t>(maps_[m].param)];
    sig << ", TSR_GRID_CONST tsr_tensor_map tsr_map" << m;
    call << ", *(const tsr_tensor_map*)tsr_a[" << src.args.size() << "]";
    src.args.push_back({CudaArgKind::TensorMap, maps_[m].param, prm.elem, maps_[m].box_rows, prm.shape});
  }
  for (size_t d = 0; d < k_.dims.size(); ++d) {
    sig << (sig.tellp() > 0 ? ", " : "") << "tsr_i64 tsr_arg_dim" << d;
    call << (call.tellp() > 0 ? ", " : "") << "*(tsr_i64*)tsr_a[" << src.args.size() << "]";
    src.args.push_back({CudaArgKind::Dim, static_cast<int>(d), Elem::I64, 0, {}});
  }
  for (int g = 0; g < 3; ++g) {
    sig << (sig.tellp() > 0 ? ", " : "") << "tsr_i64 tsr_g" << g;
    call << (call.tellp() > 0 ? ", " : "") << "*(tsr_i64*)tsr_a[" << src.args.size() << "]";
    src.args.push_back({CudaArgKind::Grid, g, Elem::I64, 0, {}});
  }

  indent_ = 1;
  line() << "const int tsr_t = tsr_thread();";
  line() << "const tsr_i64 tsr_p = tsr_block();";
  line() << "const tsr_i64 tsr_pid0 = tsr_p % tsr_g0, tsr_pid1 = (tsr_p / tsr_g0) % tsr_g1, tsr_pid2 = tsr_p / (tsr_g0 * tsr_g1);";
  // Shared memory: the mbarriers of TMA copies, the staged block loads'
  // areas, then the scratch area.
  line() << "unsigned char* tsr_sm = TSR_SMEM + " << staged_bytes_ << ";";
  line() << "(void)tsr_pid0, (void)tsr_pid1, (void)tsr_pid2, (void)tsr_sm;";
  init_barriers();
  for (size_t d = 0; d < k_.dims.size(); ++d) {
    const auto& c = d < k_.dim_values.size() ? k_.dim_values[d] : std::nullopt;
    line() << "const tsr_i64 tsr_dim" << d << " = " << (c ? int_literal(*c, Elem::I64) : "tsr_arg_dim" + std::to_string(d))
           << ";  // " << k_.dims[d];
    if (c) line() << "(void)tsr_arg_dim" << d << ";";
  }
  emit_body();
  indent_ = 0;
  shared_bytes_ += staged_bytes_;
  if (shared_bytes_ > kCudaMaxSharedBytes)
    fail("needs " + std::to_string(shared_bytes_) + " bytes of shared memory per block, more than " +
         std::to_string(kCudaMaxSharedBytes));
  src.shared_bytes = shared_bytes_;

  std::ostringstream s;
  s << "// Generated by Tessera VM's CUDA emitter from kernel @" << k_.name << " (" << src.threads << " threads per block, "
    << shared_bytes_ << " bytes of shared memory).\n"
    << "#include \"tessera_cuda.h\"\n\n"
    << "TSR_KERNEL void TSR_BOUNDS(" << src.threads << ") " << entry << "(" << sig.str() << ") {" << out_.str() << "\n}\n\n"
    << "#ifdef TSR_HOST_EMULATION\n"
    << "extern \"C\" void " << entry << "_host(void* const* tsr_a, long long programs, int threads, long long shared) {\n"
    << "  tsr_emu::launch(programs, threads, shared, [&] { " << entry << "(" << call.str() << "); });\n"
    << "}\n";
  // The emulation's tensor maps are its own encoding, made by the library
  // that reads them (cuTensorMapEncodeTiled's arguments).
  if (!maps_.empty())
    s << "extern \"C\" int " << entry << "_encode_map(void* out, const void* base, unsigned elem_bytes,\n"
      << "    unsigned long long dim0, unsigned long long dim1, unsigned long long row_bytes, unsigned box0, unsigned box1) {\n"
      << "  return tsr_emu_encode_tensor_map_2d((tsr_tensor_map*)out, base, elem_bytes, dim0, dim1, row_bytes, box0, box1, 0);\n"
      << "}\n";
  s << "#endif\n";
  src.source = s.str();
  return src;
}

}  // namespace detail

CudaKernelSource emit_cuda_kernel(const Kernel& k, const std::string& entry, const CudaTarget& target) {
  return detail::CudaEmitter(k, target).run(entry);
}

}  // namespace tessera::kir
