// The trace IR verifier; the rules are listed in ir_verify.h.
#include "tracer/ir_verify.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tracer/ir_operands.h"
#include "tracer/ir_type_check.h"

namespace tessera::jit {

namespace {

std::string ref_name(IRRef r) {
  if (r == kNoRef) return "none";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04u", r);
  return buf;
}

struct Failure {
  std::string message;
};

class Verifier {
 public:
  Verifier(const TraceIR& ir, const IRVerifyOptions& options)
      : ir_(ir), options_(options), n_(static_cast<IRRef>(ir.size())) {}

  void run() {
    constants();
    structure();
    for (IRRef r = 0; r < n_; ++r)
      if (!ir_is_const(ir_[r].op)) instruction(r);
    snapshots();
  }

 private:
  [[noreturn]] void fail_at(IRRef r, const std::string& what) const {
    throw Failure{ref_name(r) + " " + ir_op_info(ir_[r].op).name + ": " + what};
  }
  [[noreturn]] void fail_snap(size_t k, const std::string& what) const {
    throw Failure{"snapshot #" + std::to_string(k) + ": " + what};
  }
  [[noreturn]] static void fail(const std::string& what) { throw Failure{what}; }

  // Constants first: recorder's close_trace and every rebuild_trace put them
  // there (the backends materialize them before the code, and passes index
  // "before LOOP" as constants plus preamble).
  void constants() {
    for (IRRef r = 0; r < n_; ++r)
      if (static_cast<int>(ir_[r].op) >= kNumIROps) fail(ref_name(r) + ": opcode " +
                                                           std::to_string(static_cast<int>(ir_[r].op)) + " is not in ir.def");
    while (nconst_ < n_ && ir_is_const(ir_[nconst_].op)) ++nconst_;
    if (options_.constants_first)
      for (IRRef r = nconst_; r < n_; ++r)
        if (ir_is_const(ir_[r].op))
          fail_at(r, "a constant outside the constant area (0000.." + ref_name(nconst_) + ")");
    const size_t pool = ir_.const_pool().size();
    for (IRRef r = 0; r < n_; ++r) {
      const IRIns& in = ir_[r];
      if (!ir_is_const(in.op)) continue;
      IRType want = IRType::None;
      switch (in.op) {
        case IROp::KNIL: want = IRType::Nil; break;
        case IROp::KBOOL:
          want = IRType::Bool;
          if (in.op1 > 1) fail_at(r, "a bool constant must be 0 or 1");
          break;
        case IROp::KINT: want = in.type == IRType::DType ? IRType::DType : IRType::Int; break;
        case IROp::KFLOAT:
          want = IRType::Float;
          if (in.op2 > TraceIR::kConvertedInt) fail_at(r, "a float constant's op2 must be 0 or 1 (an int's float)");
          break;
        case IROp::KOBJ:
          if (in.type != IRType::Str && in.type != IRType::List && in.type != IRType::Tensor &&
              in.type != IRType::Func && in.type != IRType::Builtin)
            fail_at(r, std::string("an object constant of type ") + ir_type_name(in.type));
          want = in.type;
          break;
        default: break;
      }
      if (in.type != want) fail_at(r, std::string("a constant of type ") + ir_type_name(in.type));
      if ((in.op == IROp::KINT || in.op == IROp::KFLOAT || in.op == IROp::KOBJ) && in.op1 >= pool)
        fail_at(r, "constant pool entry " + std::to_string(in.op1) + " does not exist");
      if (in.snap != kNoSnap) fail_at(r, "a constant names a snapshot");
    }
  }

  // LOOP and PHIs: the shape close_trace writes and loop peeling keeps.
  void structure() {
    for (IRRef r = 0; r < n_; ++r) {
      const IROp op = ir_[r].op;
      if (ir_is_const(op)) continue;
      if (op == IROp::LOOP) {
        if (loop_ != kNoRef) fail_at(r, "a second LOOP (the first is " + ref_name(loop_) + ")");
        loop_ = r;
      } else if (op == IROp::PHI) {
        if (loop_ == kNoRef) fail_at(r, "a PHI before LOOP (or in a trace without one)");
        if (first_phi_ == kNoRef) first_phi_ = r;
      } else if (first_phi_ != kNoRef) {
        fail_at(r, "an instruction after the PHIs (the first is " + ref_name(first_phi_) + ")");
      }
    }
  }

  void instruction(IRRef r) {
    const IRIns& in = ir_[r];
    // kNoRef as a reference operand: only the empty argument chain.
    for (int k = 0; k < 2; ++k) {
      const uint32_t v = k == 0 ? in.op1 : in.op2;
      if (v == kNoRef && ir_operand_is_ref(in.op, k) &&
          !(k == 0 && (in.op == IROp::CALL || in.op == IROp::VNEWLIST || in.op == IROp::VNEWTENSOR)))
        fail_at(r, std::string("operand ") + (k == 0 ? "op1" : "op2") + " names no instruction");
    }
    for_each_operand_ref(in, [&](IRRef a, int k) {
      if (a >= n_) fail_at(r, "operand " + ref_name(a) + " does not exist");
      const bool backedge = in.op == IROp::PHI && k == 1;
      if (!backedge && a >= r) fail_at(r, "operand " + ref_name(a) + " is used before it is defined");
      if (ir_[a].op == IROp::PHI)
        fail_at(r, "operand " + ref_name(a) + " is a PHI (the loop body names a PHI's first operand)");
      if (ir_[a].type == IRType::None && !ir_operand_type(in.op, k).allows(IRType::None))
        fail_at(r, "operand " + ref_name(a) + " (" + ir_op_info(ir_[a].op).name + ") has no value");
      if (ir_is_sunk_allocation(ir_[a].op) && in.op != IROp::CARG && !ir_is_sunk_allocation(in.op))
        fail_at(r, "operand " + ref_name(a) + " is a sunk allocation, which only exits build");
      if (in.op == IROp::CARG && k == 1 && ir_[a].op == IROp::CARG)
        fail_at(r, "an argument that is itself a CARG node");
    });
    // Exits: guards name a snapshot, and only what may exit (guards, calls) does.
    const bool unguarded_load = sload_unguarded(in);
    if (ir_is_guard(in.op) && !unguarded_load && in.snap == kNoSnap) fail_at(r, "a guard without a snapshot");
    if (in.snap != kNoSnap) {
      if (!ir_may_exit(in.op)) fail_at(r, "names snapshot #" + std::to_string(in.snap) + " but cannot exit");
      if (in.snap >= ir_.snapshots().size()) fail_at(r, "snapshot #" + std::to_string(in.snap) + " does not exist");
    }
    structure_of(r, in);
    if (std::string e = ir_type_error(ir_, r); !e.empty()) fail_at(r, e);
  }

  // The checks build their messages only when they fail: the verifier runs
  // before every compile.
#define WANT(ok, what) \
  do {                 \
    if (!(ok)) fail_at(r, what); \
  } while (0)
  size_t chain_length(IRRef r, IRRef chain) const {
    try {
      return carg_list(ir_, chain).size();
    } catch (const std::exception& e) {
      fail_at(r, e.what());
    }
  }

  // What is not a type (ir_type_check.h has those): the tables an operand
  // indexes, argument counts, SLOAD's modes, where LOOP and PHIs may be.
  void structure_of(IRRef r, const IRIns& in) {
    switch (in.op) {
      case IROp::FMATH:
        WANT(in.op2 < static_cast<uint32_t>(FloatMath::NumFns), "no math function " + std::to_string(in.op2));
        break;
      case IROp::CALL:
        WANT(in.op2 < ir_.calls().size(), "call #" + std::to_string(in.op2) + " does not exist");
        if (in.op1 != kNoRef) chain_length(r, in.op1);
        break;
      case IROp::VNEWLIST:
        WANT((in.op1 == kNoRef ? 0 : chain_length(r, in.op1)) == in.op2,
             "the element count does not match op2 = " + std::to_string(in.op2));
        break;
      case IROp::VNEWTENSOR:
        WANT(in.op2 < ir_.virtual_tensors().size(), "virtual tensor #" + std::to_string(in.op2) + " does not exist");
        WANT(static_cast<int64_t>(in.op1 == kNoRef ? 0 : chain_length(r, in.op1)) ==
                 ir_.virtual_tensors()[in.op2].numel(),
             "the element count does not match VTENSOR #" + std::to_string(in.op2));
        break;
      case IROp::SLOAD: WANT(in.op2 < kSloadPassed + kPassedValues, "SLOAD mode " + std::to_string(in.op2)); break;
      case IROp::LOOP: WANT(in.snap == kNoSnap, "LOOP names a snapshot"); break;
      case IROp::PHI:
        WANT(in.op1 < loop_ || ir_is_const(ir_[in.op1].op), "its first operand " + ref_name(in.op1) + " is not defined before LOOP " + ref_name(loop_));
        WANT(in.op2 < n_ && ir_[in.op2].op != IROp::PHI, "its second operand " + ref_name(in.op2) + " is a PHI");
        break;
      default: break;
    }
  }
#undef WANT

  void snapshots() {
    const auto& snaps = ir_.snapshots();
    // The earliest instruction exiting through each snapshot.
    std::vector<IRRef> first_user(snaps.size(), kNoRef);
    for (IRRef r = 0; r < n_; ++r) {
      const uint16_t s = ir_[r].snap;
      if (s != kNoSnap && s < snaps.size() && first_user[s] == kNoRef) first_user[s] = r;
    }
    for (size_t k = 0; k < snaps.size(); ++k) {
      const Snapshot& s = snaps[k];
      if (s.ir_ref > n_) fail_snap(k, "ir=" + ref_name(s.ir_ref) + " is past the trace");
      // ir= names the first instruction the snapshot is valid for (every
      // rebuild maps it to a kept instruction, or the end), never a constant.
      if (options_.constants_first && s.ir_ref < n_ && ir_is_const(ir_[s.ir_ref].op))
        fail_snap(k, "ir=" + ref_name(s.ir_ref) + " names a constant, not an instruction");
      const IRRef user = first_user[k];
      if (user != kNoRef && s.ir_ref > user)
        fail_snap(k, "ir=" + ref_name(s.ir_ref) + " is after " + ref_name(user) + ", which exits through it");
      for (size_t i = 0; i < s.entries.size(); ++i) {
        const SnapshotEntry& e = s.entries[i];
        auto slot = [&] { return "slot " + std::to_string(e.slot) + " = " + ref_name(e.ref); };
        if (i > 0 && s.entries[i - 1].slot >= e.slot)
          fail_snap(k, slot() + ": entries are not sorted by slot, each slot once");
        if (e.ref >= n_) fail_snap(k, slot() + ": no such instruction");
        const IRIns& v = ir_[e.ref];
        if (v.op == IROp::PHI) fail_snap(k, slot() + " is a PHI (snapshots name a PHI's first operand)");
        if (v.type == IRType::None) fail_snap(k, slot() + " (" + ir_op_info(v.op).name + ") has no value");
        if (user != kNoRef && e.ref >= user)
          fail_snap(k, slot() + " is not defined before " + ref_name(user) + ", which exits through the snapshot");
      }
    }
  }

  const TraceIR& ir_;
  const IRVerifyOptions options_;
  const IRRef n_;
  IRRef nconst_ = 0;
  IRRef loop_ = kNoRef;
  IRRef first_phi_ = kNoRef;
};

}  // namespace

std::string ir_verify_error(const TraceIR& ir, const IRVerifyOptions& options) {
  try {
    Verifier(ir, options).run();
  } catch (const Failure& f) {
    return f.message;
  }
  return {};
}

void verify_ir(const TraceIR& ir, const std::string& where, const IRVerifyOptions& options) {
  std::string e = ir_verify_error(ir, options);
  if (e.empty()) return;
  throw IRVerifyError("IR verifier" + (where.empty() ? std::string() : " (" + where + ")") + ": " + e);
}

// Read each time (a pipeline's construction, a failure): tests that feed
// broken traces on purpose switch abort off around them.
IRVerifyMode ir_verify_mode() {
  const char* v = std::getenv("TESSERA_VERIFY_IR");
  if (v == nullptr || *v == '\0') {
#ifdef NDEBUG
    return IRVerifyMode::off;
#else
    return IRVerifyMode::each;
#endif
  }
  if (std::strcmp(v, "abort") == 0) return IRVerifyMode::abort;
  return std::strcmp(v, "0") == 0 ? IRVerifyMode::off : IRVerifyMode::each;
}

ScopedIRVerifyMode::ScopedIRVerifyMode(const char* value) {
  if (const char* v = std::getenv("TESSERA_VERIFY_IR")) {
    had_ = true;
    old_ = v;
  }
  ::setenv("TESSERA_VERIFY_IR", value, 1);
}

ScopedIRVerifyMode::~ScopedIRVerifyMode() {
  if (had_)
    ::setenv("TESSERA_VERIFY_IR", old_.c_str(), 1);
  else
    ::unsetenv("TESSERA_VERIFY_IR");
}

void check_ir(const TraceIR& ir, const std::string& where, const IRVerifyOptions& options) {
  try {
    verify_ir(ir, where, options);
  } catch (const IRVerifyError& e) {
    if (ir_verify_mode() == IRVerifyMode::abort) {
      std::fprintf(stderr, "%s\n%s", e.what(), print_ir(ir).c_str());
      std::abort();
    }
    throw;
  }
}

}  // namespace tessera::jit
