#include "optimizer/alias.h"

#include <map>
#include <stdexcept>
#include <string>

namespace tessera::jit {
namespace {

// An int value as a linear form over other values: constant + sum(coef * ref),
// all modulo 2^64 (the IR's ints wrap, so the ring arithmetic is exact).
// Equal forms are equal values; forms that differ by a constant differ by
// exactly that constant.
class LinearForm {
 public:
  // Deep enough for a row-major flat index of a rank-3 tensor plus an offset;
  // deeper operands stay opaque terms (which only weakens answers).
  static constexpr int kMaxDepth = 6;

  static LinearForm of(const TraceIR& ir, const std::function<IRRef(IRRef)>& resolve, IRRef r, int depth = 0) {
    r = resolve(r);
    if (r == kNoRef) throw std::invalid_argument("alias analysis: an index operand is missing");
    const IRIns& in = ir[r];
    if (in.op == IROp::KINT) return constant(static_cast<uint64_t>(ir.const_int(r)));
    if (depth < kMaxDepth) {
      auto sub = [&](IRRef x) { return of(ir, resolve, x, depth + 1); };
      switch (in.op) {
        case IROp::ADD: return sub(in.op1).plus(sub(in.op2), 1);
        case IROp::SUB: return sub(in.op1).plus(sub(in.op2), ~uint64_t{0});
        case IROp::NEG: return constant(0).plus(sub(in.op1), ~uint64_t{0});
        case IROp::MUL: {
          const IRRef a = resolve(in.op1), b = resolve(in.op2);
          if (ir[b].op == IROp::KINT) return constant(0).plus(sub(a), static_cast<uint64_t>(ir.const_int(b)));
          if (ir[a].op == IROp::KINT) return constant(0).plus(sub(b), static_cast<uint64_t>(ir.const_int(a)));
          break;
        }
        default: break;
      }
    }
    LinearForm f = constant(0);
    f.terms_[r] = 1;
    return f;
  }

  // this + scale * other
  LinearForm plus(const LinearForm& other, uint64_t scale) const {
    LinearForm f = *this;
    f.constant_ += scale * other.constant_;
    for (const auto& [ref, coef] : other.terms_) {
      uint64_t& c = f.terms_[ref];
      c += scale * coef;
      if (c == 0) f.terms_.erase(ref);
    }
    return f;
  }

  bool is_constant() const { return terms_.empty(); }
  uint64_t constant_part() const { return constant_; }

 private:
  static LinearForm constant(uint64_t c) {
    LinearForm f;
    f.constant_ = c;
    return f;
  }
  uint64_t constant_ = 0;
  std::map<IRRef, uint64_t> terms_;  // no zero coefficients
};

}  // namespace

const char* alias_result_name(AliasResult r) {
  switch (r) {
    case AliasResult::NoAlias: return "NoAlias";
    case AliasResult::MayAlias: return "MayAlias";
    case AliasResult::MustAlias: return "MustAlias";
  }
  return "?";
}

AliasAnalysis::AliasAnalysis(const TraceIR& ir, Resolver resolve) : ir_(ir), resolve_(std::move(resolve)) {}

bool AliasAnalysis::is_memory_access(IROp op) {
  switch (ir_op_info(op).mem_space) {
    case MemLocation::Space::Global:
    case MemLocation::Space::ListElement:
    case MemLocation::Space::TensorElement: return true;
    case MemLocation::Space::None:
    case MemLocation::Space::Slot:
    case MemLocation::Space::ListLength: return false;
  }
  return false;
}

IRRef AliasAnalysis::resolve(IRRef r) const {
  if (r == kNoRef) return r;
  if (resolve_) r = resolve_(r);
  if (r >= ir_.size()) throw std::invalid_argument("alias analysis: reference " + std::to_string(r) + " out of range");
  return r;
}

MemLocation AliasAnalysis::location(IRRef access) const {
  if (access >= ir_.size()) throw std::invalid_argument("alias analysis: access " + std::to_string(access) + " out of range");
  const IRIns& in = ir_[access];
  if (!is_memory_access(in.op))
    throw std::invalid_argument("alias analysis: " + std::string(ir_op_info(in.op).name) + " at " +
                                std::to_string(access) + " is not a memory access");
  const IROpInfo& info = ir_op_info(in.op);
  MemLocation loc;
  loc.space = info.mem_space;
  if (loc.space == MemLocation::Space::Global) {  // loads and stores name the global
    loc.global = in.op1;
    return loc;
  }
  if (info.mem_access != IRMemAccess::Store) {  // loads and addresses: (object, index)
    loc.object = resolve(in.op1);
    loc.index = resolve(in.op2);
    return loc;
  }
  // Element stores write through the address op1 computed.
  const IRRef addr = resolve(in.op1);
  if (addr != kNoRef) {
    const IROpInfo& a = ir_op_info(ir_[addr].op);
    if (a.mem_space == loc.space && a.mem_access == IRMemAccess::Address) return location(addr);
  }
  return loc;  // unknown object and index: may be any element
}

AliasResult AliasAnalysis::same_object_indices(IRRef a, IRRef b) const {
  if (a == kNoRef || b == kNoRef) return AliasResult::MayAlias;
  if (resolve(a) == resolve(b)) return AliasResult::MustAlias;
  auto resolver = [this](IRRef r) { return resolve(r); };
  const LinearForm diff = LinearForm::of(ir_, resolver, a).plus(LinearForm::of(ir_, resolver, b), ~uint64_t{0});
  if (!diff.is_constant()) return AliasResult::MayAlias;
  return diff.constant_part() == 0 ? AliasResult::MustAlias : AliasResult::NoAlias;
}

AliasResult AliasAnalysis::tensor_elements(const MemLocation& a, const MemLocation& b) const {
  if (a.index == kNoRef || b.index == kNoRef) return AliasResult::MayAlias;
  const IRIns& ia = ir_[resolve(a.index)];
  const IRIns& ib = ir_[resolve(b.index)];
  const bool same_object = a.object != kNoRef && resolve(a.object) == resolve(b.object);
  if (ia.op != IROp::TIDX || ib.op != IROp::TIDX)  // not as the recorder writes it: only identity is known
    return same_object && resolve(a.index) == resolve(b.index) ? AliasResult::MustAlias : AliasResult::MayAlias;
  if (ia.op2 != ib.op2) return AliasResult::NoAlias;  // two dtypes: two tensors, two buffers
  if (!same_object) return AliasResult::MayAlias;
  return same_object_indices(ia.op1, ib.op1);
}

AliasResult AliasAnalysis::alias(const MemLocation& a, const MemLocation& b) const {
  if (a.space != b.space) return AliasResult::NoAlias;
  switch (a.space) {
    case MemLocation::Space::Global: return a.global == b.global ? AliasResult::MustAlias : AliasResult::NoAlias;
    case MemLocation::Space::TensorElement: return tensor_elements(a, b);
    case MemLocation::Space::ListElement:
      if (a.object == kNoRef || resolve(a.object) != resolve(b.object)) return AliasResult::MayAlias;
      return same_object_indices(a.index, b.index);
    case MemLocation::Space::None:
    case MemLocation::Space::Slot:
    case MemLocation::Space::ListLength: break;  // not locations the analysis makes
  }
  return AliasResult::MayAlias;
}

}  // namespace tessera::jit
