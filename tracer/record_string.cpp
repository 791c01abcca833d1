// TraceRecorder, strings: the character loops of tokenizers and searches
// (`c = s[i]`, `c == p[k]`, `c >= "0"`, `i < len(s)`) without helper calls.
//
// Design. Strings are immutable, so their length and bytes are pure values
// (SLEN, SBYTE). `s[i]` with an index in range is a bounds guard, the byte,
// and SCHAR: the shared one-byte string of that byte (the same object the
// interpreter's `s[i]` gives, vm/core/value.h), so nothing is allocated. A
// comparison whose operands are such characters, or a character and a
// string constant, compares bytes (unsigned, as strings compare) or folds:
// the SCHAR is then often dead. A string from a register or a list compared
// with a character is one too when it has one byte, and unequal to it when
// it has not (a guard on its length either way); == and != of such a string
// and a constant of up to 16 bytes are decided by guards on the length and
// bytes. Of two strings from registers, one that holds a string constant of
// the function being recorded (loaded before the trace began, across a
// call: `peek() == "+"` after a return) is that constant behind an identity
// guard (constants are per function, so a value merely equal to one is not
// taken for it). Anything else (a negative index, two other strings from
// registers, the order of longer strings) takes the generic path.
#include <algorithm>

#include "tracer/constant_description.h"
#include "tracer/recorder.h"
#include "tracer/recorder_internal.h"

namespace tessera::jit {

namespace {

// `k OP c` as `c OP' k`.
CmpOp mirrored(CmpOp op) {
  switch (op) {
    case CmpOp::Lt: return CmpOp::Gt;
    case CmpOp::Le: return CmpOp::Ge;
    case CmpOp::Gt: return CmpOp::Lt;
    case CmpOp::Ge: return CmpOp::Le;
    default: return op;
  }
}

}  // namespace

bool TraceRecorder::str_index(uint32_t dst, IRRef s, IRRef i, const Value& str, const Value& idx) {
  if (!str.is_str() || !idx.is_int() || idx.as_int() < 0 ||
      static_cast<uint64_t>(idx.as_int()) >= str.as_str()->length)
    return false;
  const IRRef len = ir_.emit(IROp::SLEN, IRType::Int, s);
  guard(true, ir_.emit(IROp::ULT, IRType::Bool, i, len));
  const IRRef byte = ir_.emit(IROp::SBYTE, IRType::Int, s, i);
  write(dst, ir_.emit(IROp::SCHAR, IRType::Str, byte));
  return true;
}

bool TraceRecorder::char_to_int(uint32_t dst, IRRef c, const Value& v) {
  if (ir_[c].op != IROp::SCHAR || !v.is_str() || v.as_str()->length != 1) return false;
  const unsigned char seen = static_cast<unsigned char>(v.as_str()->data()[0]);
  if (seen < '0' || seen > '9') return false;
  const IRRef digit = ir_.emit(IROp::SUB, IRType::Int, ir_[c].op1, ir_.kint('0'));
  guard(true, ir_.emit(IROp::ULT, IRType::Bool, digit, ir_.kint(10)));
  write(dst, digit);
  return true;
}

bool TraceRecorder::compare_strings(CmpOp op, IRRef a, const Value& va, IRRef b, const Value& vb, IRRef& out) {
  if (type_of(a) != IRType::Str || type_of(b) != IRType::Str) return false;
  auto is_char = [&](IRRef r) {
    if (ir_[r].op == IROp::SCHAR) return true;
    return ir_[r].op == IROp::KOBJ && static_cast<const StrObj*>(ir_.const_ptr(r))->length == 1;
  };
  // A string from anywhere else (a register, a list) compared with a
  // character: of one byte (guarded), it is a character too; of another
  // length, it is not equal to one (guarded), whatever its bytes.
  auto from_elsewhere = [&](IRRef& r, const Value& v, IRRef other) {
    if (!is_char(other) || ir_[r].op == IROp::SCHAR || ir_[r].op == IROp::KOBJ || !v.is_str()) return false;
    const IRRef len = ir_.emit(IROp::SLEN, IRType::Int, r);
    if (v.as_str()->length == 1) {
      guard(true, ir_.emit(IROp::EQ, IRType::Bool, len, ir_.kint(1)));
      r = ir_.emit(IROp::SCHAR, IRType::Str, ir_.emit(IROp::SBYTE, IRType::Int, r, ir_.kint(0)));
      return false;
    }
    if (op != CmpOp::Eq && op != CmpOp::Ne) return false;
    guard(true, ir_.emit(IROp::NE, IRType::Bool, len, ir_.kint(1)));
    out = ir_.kbool(op == CmpOp::Ne);
    return true;
  };
  if (!is_char(a) && !is_char(b) && !constant_in_register(b, vb)) constant_in_register(a, va);
  if (from_elsewhere(a, va, b) || from_elsewhere(b, vb, a)) return true;
  if (compare_chars(op, a, b, out)) return true;
  if (op != CmpOp::Eq && op != CmpOp::Ne) {
    // An ordering of two strings: a direct call (SLT, SLE; `a > b` is
    // SLT b a), not the generic compare CALL.
    const bool swap = op == CmpOp::Gt || op == CmpOp::Ge;
    const IROp order = op == CmpOp::Lt || op == CmpOp::Gt ? IROp::SLT : IROp::SLE;
    out = ir_.emit(order, IRType::Bool, swap ? b : a, swap ? a : b);
    return true;
  }
  // A string from elsewhere == or != a short constant (`node[0] == "op"`):
  // decided by what the recording sees, behind guards on the length and on
  // the bytes that decide it (all of them when equal, the first that
  // differs when not). The branch on the result would guard it anyway.
  if (op != CmpOp::Eq && op != CmpOp::Ne) return false;
  const bool k_on_left = ir_[a].op == IROp::KOBJ;
  const IRRef x = k_on_left ? b : a;
  const IRRef k = k_on_left ? a : b;
  const Value& vx = k_on_left ? vb : va;
  constexpr size_t kMaxBytes = 16;
  if (ir_[k].op != IROp::KOBJ || ir_[x].op == IROp::KOBJ || ir_[x].op == IROp::SCHAR || !vx.is_str()) return false;
  const std::string_view kv = static_cast<const StrObj*>(ir_.const_ptr(k))->view();
  const std::string_view xv = vx.as_str()->view();
  if (kv.size() > kMaxBytes) return false;
  const IRRef len = ir_.emit(IROp::SLEN, IRType::Int, x);
  const IRRef klen = ir_.kint(static_cast<int64_t>(kv.size()));
  if (xv.size() != kv.size()) {
    guard(true, ir_.emit(IROp::NE, IRType::Bool, len, klen));
    out = ir_.kbool(op == CmpOp::Ne);
    return true;
  }
  guard(true, ir_.emit(IROp::EQ, IRType::Bool, len, klen));
  for (size_t j = 0; j < kv.size(); ++j) {
    const IRRef byte = ir_.emit(IROp::SBYTE, IRType::Int, x, ir_.kint(static_cast<int64_t>(j)));
    const IRRef kb = ir_.kint(static_cast<unsigned char>(kv[j]));
    const bool same = xv[j] == kv[j];
    guard(true, ir_.emit(same ? IROp::EQ : IROp::NE, IRType::Bool, byte, kb));
    if (!same) {
      out = ir_.kbool(op == CmpOp::Ne);
      return true;
    }
  }
  out = ir_.kbool(op == CmpOp::Eq);
  return true;
}

bool TraceRecorder::constant_in_register(IRRef& r, const Value& v) {
  if (ir_[r].op != IROp::SLOAD || !v.is_str()) return false;
  const std::vector<Value>& ks = frames_.back().proto->consts;
  if (std::none_of(ks.begin(), ks.end(), [&](const Value& k) { return k.is_str() && k.as_obj() == v.as_obj(); }))
    return false;
  ir_.describe_const(v.as_obj(), describe_constant(v));
  const IRRef k = ir_.kobj(v.as_obj(), IRType::Str);
  guard(true, ir_.emit(IROp::EQ, IRType::Bool, r, k));
  r = k;
  return true;
}

bool TraceRecorder::compare_chars(CmpOp op, IRRef a, IRRef b, IRRef& out) {
  auto byte_of = [&](IRRef r) { return ir_[r].op == IROp::SCHAR ? ir_[r].op1 : kNoRef; };
  const IRRef ba = byte_of(a), bb = byte_of(b);
  if (ba == kNoRef && bb == kNoRef) return false;
  if (ba != kNoRef && bb != kNoRef) {
    out = ir_.emit(kCompareIR[static_cast<int>(op)], IRType::Bool, ba, bb);
    return true;
  }
  // One character, one string constant (on either side).
  const bool swapped = ba == kNoRef;
  const IRRef ch = swapped ? bb : ba;
  const IRRef k = swapped ? a : b;
  if (ir_[k].op != IROp::KOBJ) return false;
  const CmpOp o = swapped ? mirrored(op) : op;
  const std::string_view kv = static_cast<const StrObj*>(ir_.const_ptr(k))->view();
  if (kv.size() == 1) {
    out = ir_.emit(kCompareIR[static_cast<int>(o)], IRType::Bool, ch, ir_.kint(static_cast<unsigned char>(kv[0])));
    return true;
  }
  if (kv.empty()) {  // a character is longer than "": greater, never equal
    out = ir_.kbool(o == CmpOp::Ne || o == CmpOp::Gt || o == CmpOp::Ge);
    return true;
  }
  // Longer than one byte: never equal; c < "xy" exactly when c <= "x".
  if (o == CmpOp::Eq || o == CmpOp::Ne) {
    out = ir_.kbool(o == CmpOp::Ne);
    return true;
  }
  const IRRef first = ir_.kint(static_cast<unsigned char>(kv[0]));
  const bool below = o == CmpOp::Lt || o == CmpOp::Le;
  out = ir_.emit(below ? IROp::LE : IROp::GT, IRType::Bool, ch, first);
  return true;
}

}  // namespace tessera::jit
