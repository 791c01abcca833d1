// TraceIR builder: instruction emission and the deduplicated constants.
#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdio>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>

#include "tracer/trace_ir.h"

namespace tessera::jit {

namespace {
constexpr const char* kFloatMathNames[] = {
#define FLOATMATH(Name, fn, t1, t2, impl) #fn,
#include "tracer/float_math.def"
#undef FLOATMATH
};
static_assert(std::size(kFloatMathNames) == static_cast<size_t>(FloatMath::NumFns));

// The elementwise table's fmath column (vm/tensor/elementwise_ops.def) is
// right both ways: a row it names is spelled as the built-in (the recorder
// finds it by that name), and a built-in it gives none has no row.
constexpr bool fmath_column_holds(FloatMath f, std::string_view name) {
  if (f != FloatMath::NumFns) return std::string_view(kFloatMathNames[static_cast<size_t>(f)]) == name;
  for (const char* n : kFloatMathNames)
    if (std::string_view(n) == name) return false;
  return true;
}
#define TESSERA_UNARY(Name, name, display, builtin, keeps, kflags, fmath, ...) \
  static_assert(fmath_column_holds(FloatMath::fmath, name), "elementwise_ops.def: the fmath column of " name);
#define TESSERA_BINARY(...)
#include "vm/tensor/elementwise_ops.def"
#undef TESSERA_UNARY
#undef TESSERA_BINARY
}  // namespace

const char* float_math_name(FloatMath f) {
  auto i = static_cast<size_t>(f);
  return i < std::size(kFloatMathNames) ? kFloatMathNames[i] : "?";
}

FloatMath float_math_by_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kFloatMathNames); ++i)
    if (name == kFloatMathNames[i]) return static_cast<FloatMath>(i);
  return FloatMath::NumFns;
}

IRRef TraceIR::emit(IROp op, IRType type, uint32_t op1, uint32_t op2, uint16_t snap) {
  // Constants must be unique per value and carry a pool entry; only the k*
  // helpers maintain both, so a raw constant here is a caller bug.
  if (static_cast<int>(op) >= kNumIROps || ir_is_const(op))
    throw std::invalid_argument(std::string("TraceIR::emit: use the k* helpers for ") +
                                (static_cast<int>(op) < kNumIROps ? ir_op_info(op).name : "?"));
  IRRef ref = static_cast<IRRef>(ins_.size());
  ins_.push_back(IRIns{op, type, snap, op1, op2, 0, cur_origin_});
  return ref;
}

void TraceIR::set_origin(const FunctionProto* proto, uint32_t pc) {
  if (cur_origin_ < origins_.size() && origins_[cur_origin_].proto == proto && origins_[cur_origin_].pc == pc) return;
  if (origins_.size() >= kNoOrigin) {
    cur_origin_ = kNoOrigin;
    return;
  }
  cur_origin_ = static_cast<uint16_t>(origins_.size());
  origins_.push_back({proto, pc});
}

int64_t VirtualTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void TraceIR::copy_tables_from(const TraceIR& from) {
  calls_ = from.calls_;
  assumed_ = from.assumed_;
  vtensors_ = from.vtensors_;
  function_ = from.function_;
  loop_trip_hint_ = from.loop_trip_hint_;
  header_snap_ = from.header_snap_;
  copy_descriptions_from(from);
  copy_origins_from(from);
}

void TraceIR::copy_descriptions_from(const TraceIR& from) {
  for (const auto& [p, what] : from.const_what_) const_what_.emplace(p, what);
}

IRRef TraceIR::intern_const(IROp op, IRType type, uint64_t bits, bool pooled, uint32_t op2) {
  ConstKey key{bits, op, type, op2};
  auto matches = [&](IRRef r) {
    if (r >= ins_.size()) return false;
    const IRIns& in = ins_[r];
    if (in.op != op || in.type != type || in.op2 != op2) return false;
    if (!pooled) return in.op1 == bits;
    return in.op1 < consts_.size() && consts_[in.op1] == bits;
  };
  if (auto it = kmap_.find(key); it != kmap_.end() && matches(it->second)) return it->second;

  IRRef ref = static_cast<IRRef>(ins_.size());
  uint32_t op1 = static_cast<uint32_t>(bits);
  if (pooled) {
    op1 = static_cast<uint32_t>(consts_.size());
    consts_.push_back(bits);
  }
  ins_.push_back(IRIns{op, type, kNoSnap, op1, op2});
  kmap_[key] = ref;
  return ref;
}

IRRef TraceIR::knil() { return intern_const(IROp::KNIL, IRType::Nil, 0, false); }

IRRef TraceIR::kbool(bool b) { return intern_const(IROp::KBOOL, IRType::Bool, b ? 1 : 0, false); }

IRRef TraceIR::kint(int64_t v) {
  return intern_const(IROp::KINT, IRType::Int, std::bit_cast<uint64_t>(v), true);
}

IRRef TraceIR::kdtype(DType d) {
  return intern_const(IROp::KINT, IRType::DType, static_cast<uint64_t>(d), true);
}

const void* TraceIR::assumption_of(const Value& g) {
  if (g.is_func()) return g.as_func();
  if (g.is_builtin()) return g.as_builtin();
  if (g.is_dtype()) return reinterpret_cast<const void*>(static_cast<uintptr_t>(g.as_dtype()) + 1);
  return nullptr;
}

// Keyed by bit pattern, not by value: -0.0 and 0.0 must stay distinct
// constants, and every NaN must equal itself.
IRRef TraceIR::kfloat(double v, bool an_int) {
  return intern_const(IROp::KFLOAT, IRType::Float, std::bit_cast<uint64_t>(v), true, an_int ? kConvertedInt : 0);
}

IRRef TraceIR::kobj(const void* p, IRType type) {
  return intern_const(IROp::KOBJ, type, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)), true);
}

int64_t TraceIR::const_int(IRRef r) const {
  assert(r < ins_.size() && ins_[r].op == IROp::KINT);
  return std::bit_cast<int64_t>(consts_[ins_[r].op1]);
}

double TraceIR::const_float(IRRef r) const {
  assert(r < ins_.size() && ins_[r].op == IROp::KFLOAT);
  return std::bit_cast<double>(consts_[ins_[r].op1]);
}

const void* TraceIR::const_ptr(IRRef r) const {
  assert(r < ins_.size() && ins_[r].op == IROp::KOBJ);
  return reinterpret_cast<const void*>(static_cast<uintptr_t>(consts_[ins_[r].op1]));
}

IRRef TraceIR::loop_ref() const {
  for (IRRef r = 0; r < ins_.size(); ++r)
    if (ins_[r].op == IROp::LOOP) return r;
  return kNoRef;
}

bool TraceIR::loop_body_clobbers_memory() const {
  const IRRef loop = loop_ref();
  if (loop == kNoRef) return false;
  for (IRRef r = loop + 1; r < ins_.size(); ++r)
    if (ir_op_info(ins_[r].op).clobbers_memory) return true;
  return false;
}

std::vector<IRRef> carg_list(const TraceIR& ir, IRRef chain) {
  std::vector<IRRef> args;
  for (IRRef a = chain; a != kNoRef;) {
    if (a >= ir.size()) throw std::invalid_argument("argument reference " + std::to_string(a) + " is out of range");
    if (ir[a].op != IROp::CARG) {
      args.push_back(a);
      break;
    }
    args.push_back(ir[a].op2);
    a = ir[a].op1;
  }
  std::reverse(args.begin(), args.end());
  return args;
}

void throw_at_instruction(const TraceIR& ir, IRRef at, const std::string& msg) {
  char where[64];
  if (at < ir.size())
    std::snprintf(where, sizeof where, "instruction %04u (%s): ", at, ir_op_info(ir[at].op).name);
  else
    where[0] = '\0';
  throw std::runtime_error(std::string(where) + msg);
}

bool takes_passed_values(const TraceIR& ir) {
  return std::any_of(ir.instructions().begin(), ir.instructions().end(), [](const IRIns& in) { return sload_passed(in); });
}

}  // namespace tessera::jit
