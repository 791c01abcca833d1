// Both host tiers (host_backend_fixture.h): a tensor's rank and dims, elements
// a device holds, calls of built-ins (and a call that fails), what a compile
// reports, and the malformed traces a backend rejects.
#include "tests/codegen/host_backend_fixture.h"

namespace tessera::jit {
namespace {

// TRANK: the length of the shape, for tensors of rank 0, 1 and 8; with
// TDIM of the first dimension where there is one (the recorder reads no
// dimension past the rank it guarded).
TEST_P(HostBackendTest, TensorRankAndDimensions) {
  for (const bool with_dim : {false, true}) {
    TraceIR ir;
    const uint16_t s0 = snap(ir, {});
    IRRef t = sload(ir, IRType::Tensor, 0, s0);
    ir.emit(IROp::LOOP, IRType::None);
    IRRef rank = ir.emit(IROp::TRANK, IRType::Int, t);
    IRRef dim0 = with_dim ? ir.emit(IROp::TDIM, IRType::Int, t, 0) : rank;
    const uint16_t s1 = snap(ir, {{1, rank}, {2, dim0}});
    ir.emit(IROp::GUARDT, IRType::None, ir.kbool(false), 0, s1);
    auto owned = make_backend();
    CompiledTrace c = owned->compile(ir, "trank");
    Runner r;
    for (const Shape& shape : {Shape{}, Shape{5}, Shape{1, 2, 1, 1, 1, 1, 1, 3}}) {
      if (with_dim && shape.empty()) continue;
      r.regs = {make_tensor(DType::F32, shape)};
      ASSERT_EQ(r.run(c.fn), 1u);
      EXPECT_EQ(static_cast<int64_t>(r.exit_vals[0]), static_cast<int64_t>(shape.size()));
      if (with_dim) {
        EXPECT_EQ(static_cast<int64_t>(r.exit_vals[1]), shape[0]);
      }
    }
  }
}

// A device holds the tensor's elements (vm/tensor/device_copy.h): the
// trace's element load and store copy them back first, once, with the values
// that live across that call (an int, a float) intact; then the elements are
// the host's and the trace reads and writes them directly.
class FillingCopy : public DeviceCopy {
 public:
  explicit FillingCopy(int* fetches) : fetches_(fetches) {}
  void to_host(void* host, size_t bytes) override {
    ++*fetches_;
    auto* f = static_cast<float*>(host);
    for (size_t i = 0; i < bytes / sizeof(float); ++i) f[i] = 100.0f + static_cast<float>(i);
  }

 private:
  int* fetches_;
};

TEST_P(HostBackendTest, ElementsADeviceHoldsAreCopiedBackFirst) {
  TraceIR ir;
  const uint16_t s0 = snap(ir, {});
  const IRRef t = sload(ir, IRType::Tensor, 0, s0);
  const IRRef n = sload(ir, IRType::Int, 1, s0);
  const IRRef x = sload(ir, IRType::Float, 2, s0);
  ir.emit(IROp::LOOP, IRType::None);
  const IRRef loaded = ir.emit(IROp::TLOAD, IRType::Float, t, ir.emit(IROp::TIDX, IRType::Int, ir.kint(2), static_cast<IRRef>(DType::F32)));
  const IRRef at = ir.emit(IROp::TREF, IRType::None, t, ir.emit(IROp::TIDX, IRType::Int, ir.kint(3), static_cast<IRRef>(DType::F32)));
  ir.emit(IROp::TSTORE, IRType::None, at, ir.kfloat(42.5));
  const uint16_t s1 = snap(ir, {{3, loaded}, {4, n}, {5, x}});
  ir.emit(IROp::GUARDT, IRType::None, ir.kbool(false), 0, s1);
  auto owned = make_backend();
  CompiledTrace c = owned->compile(ir, "fetch");
  int fetches = 0;
  Runner r;
  Value tv = make_tensor(DType::F32, {5});
  TensorObj& tensor = *tv.as_tensor();
  tensor.attach_device_copy(std::make_unique<FillingCopy>(&fetches));
  r.regs = {tv, Value::integer(77), Value::number(0.25)};
  ASSERT_EQ(r.run(c.fn), 1u);
  EXPECT_EQ(fetches, 1);
  EXPECT_EQ(tensor.device_copy, nullptr);
  EXPECT_EQ(as_double(r.exit_vals[0]), 102.0);
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[1]), 77);
  EXPECT_EQ(as_double(r.exit_vals[2]), 0.25);
  const float* e = static_cast<const float*>(tensor.host_buffer());
  EXPECT_EQ(e[0], 100.0f);
  EXPECT_EQ(e[3], 42.5f);
  EXPECT_EQ(e[4], 104.0f);
  // The elements are the host's now: nothing more to copy.
  static_cast<float*>(tensor.host_buffer())[2] = 7.0f;
  ASSERT_EQ(r.run(c.fn), 1u);
  EXPECT_EQ(fetches, 1);
  EXPECT_EQ(as_double(r.exit_vals[0]), 7.0);
}

// The recorder's model: CALL (type None) stores into dest_slot, then an SLOAD
// reload types the result. Also the scalar-return model (CALL of type Float).
TEST_P(HostBackendTest, CallBuiltin) {
  TraceIR ir;
  const uint16_t s0 = snap(ir, {});
  IRRef x = sload(ir, IRType::Float, 0, s0);
  ir.emit(IROp::LOOP, IRType::None);
  CallTarget sq{call::Builtin{builtin_global_value("sqrt").as_builtin()}, "sqrt"};
  sq.dest_slot = 1;
  ir.calls().push_back(sq);
  const uint16_t s1 = snap(ir, {});
  ir.emit(IROp::CALL, IRType::None, x, 0, s1);
  const uint16_t s2 = snap(ir, {});
  IRRef y = ir.emit(IROp::SLOAD, IRType::Float, 1, 1, s2);
  CallTarget add{call::Arith{BinOp::Add}, "arith.+"};
  ir.calls().push_back(add);
  IRRef args = ir.emit(IROp::CARG, IRType::None, x, y);
  IRRef z = ir.emit(IROp::CALL, IRType::Float, args, 1, s1);
  const uint16_t s3 = snap(ir, {{2, y}, {3, z}});
  ir.emit(IROp::GUARDT, IRType::None, ir.kbool(false), 0, s3);
  auto owned = make_backend();
  HostBackend& be = *owned;
  CompiledTrace t = be.compile(ir, "call");
  report("builtin call", t);
  Runner r;
  r.regs = {Value::number(2.0), Value::nil()};
  EXPECT_EQ(r.run(t.fn), 3u);
  EXPECT_EQ(r.regs[1].as_float(), std::sqrt(2.0));
  EXPECT_EQ(as_double(r.exit_vals[0]), std::sqrt(2.0));
  EXPECT_EQ(as_double(r.exit_vals[1]), 2.0 + std::sqrt(2.0));
}

// pop(list): succeeds on a non-empty list (result into dest_slot); on an
// empty list the built-in raises and the trace leaves through the CALL's
// snapshot.
TEST_P(HostBackendTest, FailingCallExitsThroughItsSnapshot) {
  TraceIR ir;
  const uint16_t s0 = snap(ir, {});
  const IRRef l = sload(ir, IRType::List, 0, s0), k = sload(ir, IRType::Int, 2, s0);
  ir.emit(IROp::LOOP, IRType::None);
  CallTarget pop{call::Builtin{builtin_global_value("pop").as_builtin()}, "pop"};
  pop.dest_slot = 1;
  ir.calls().push_back(pop);
  const uint16_t s1 = snap(ir, {{2, k}});
  ir.emit(IROp::CALL, IRType::None, l, 0, s1);
  const uint16_t s2 = snap(ir, {{2, k}});
  ir.emit(IROp::SLOAD, IRType::Int, 1, 1, s2);
  IRRef k2 = ir.emit(IROp::ADD, IRType::Int, k, ir.kint(1));
  ir.emit(IROp::PHI, IRType::Int, k, k2);
  auto owned = make_backend();
  HostBackend& be = *owned;
  CompiledTrace t = be.compile(ir, "pop");
  Runner r;
  Value list = make_list({Value::integer(1), Value::integer(2), Value::integer(3)});
  r.regs = {list, Value::nil(), Value::integer(0)};
  EXPECT_EQ(r.run(t.fn), 1u);  // popped 3 times, then the 4th pop raised
  EXPECT_EQ(r.exit_vals[0], 3u);
  EXPECT_TRUE(list.as_list()->items.empty());
  EXPECT_EQ(r.regs[1].as_int(), 1);  // the last successful pop
  // A str in the list: the pop succeeds but the reload guard fails (snap 2).
  list.as_list()->items.push_back(make_str("s"));
  r.regs[2] = Value::integer(0);
  EXPECT_EQ(r.run(t.fn), 2u);
  EXPECT_EQ(r.exit_vals[0], 0u);
  EXPECT_TRUE(r.regs[1].is_str());
}

TEST_P(HostBackendTest, ReportsCodeSizeAndIR) {
  ListTrace lt;
  auto owned = make_backend();
  HostBackend& be = *owned;
  CompiledTrace t = be.compile(lt.ir, "timed");
  // (compile_ms is a measurement: any value, 0 on a coarse clock, is right.)
  ASSERT_NE(t.fn, nullptr);
  EXPECT_GT(t.code_size, 0u);
  if (std::string(be.name()) == "llvm") {
    EXPECT_NE(t.text.find("define"), std::string::npos);
    EXPECT_NE(t.text.find("phi"), std::string::npos);
  } else {
    EXPECT_NE(t.text.find("ret"), std::string::npos);  // the assembly listing
    EXPECT_NE(t.text.find("jmp"), std::string::npos);
  }
  // A second trace in the same backend with the same name is fine.
  CompiledTrace t2 = be.compile(lt.ir, "timed");
  EXPECT_NE(t2.fn, t.fn);
}

TEST_P(HostBackendTest, RejectsMalformedTraces) {
  const ScopedIRVerifyMode throwing("1");  // the IR verifier's rejections throw here
  auto owned = make_backend();
  HostBackend& be = *owned;
  TraceIR noloop;
  const uint16_t s0 = snap(noloop, {});
  sload(noloop, IRType::Int, 0, s0);
  try {
    be.compile(noloop, "noloop");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("LOOP"), std::string::npos) << e.what();
  }
  TraceIR badsnap;
  IRRef a = badsnap.emit(IROp::SLOAD, IRType::Int, 0, 0, 7);
  badsnap.emit(IROp::LOOP, IRType::None);
  (void)a;
  EXPECT_THROW(be.compile(badsnap, "badsnap"), std::runtime_error);
  TraceIR badtype;
  const uint16_t b0 = snap(badtype, {});
  IRRef f = sload(badtype, IRType::Float, 0, b0);
  badtype.emit(IROp::LOOP, IRType::None);
  badtype.emit(IROp::ADD, IRType::Int, f, f);
  EXPECT_THROW(be.compile(badtype, "badtype"), std::runtime_error);

  // Sunk tensors: built only by exits that write the registers, from as
  // many elements as the shape has, of a type that fits the dtype.
  ReturningExits exits;
  auto sunk_tensor = [&](DType dtype, std::vector<int64_t> shape, IRType element_type, size_t n) {
    TraceIR ir;
    const uint16_t z = snap(ir, {});
    IRRef e = sload(ir, element_type, 0, z);
    ir.virtual_tensors().push_back(VirtualTensor{dtype, std::move(shape)});
    IRRef t = ir.emit(IROp::VNEWTENSOR, IRType::Tensor, carg_chain(ir, std::vector<IRRef>(n, e)), 0);
    ir.emit(IROp::EXIT, IRType::None, 0, 0, snap(ir, {{1, t}}));
    return ir;
  };
  auto rejects = [&](const TraceIR& ir, const ExitLinking& linking, const std::string& why) {
    try {
      be.compile(ir, "badtensor", linking);
      ADD_FAILURE() << "expected an error: " << why;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  rejects(sunk_tensor(DType::F32, {2}, IRType::Float, 3), exits.linking, "element count");
  rejects(sunk_tensor(DType::F32, {2}, IRType::Int, 2), exits.linking, "does not fit dtype f32");
  rejects(sunk_tensor(DType::I64, {1}, IRType::Float, 1), exits.linking, "does not fit dtype i64");
  TraceIR no_table = sunk_tensor(DType::F32, {2}, IRType::Float, 2);
  no_table.virtual_tensors().clear();
  rejects(no_table, exits.linking, "does not exist");
  be.compile(sunk_tensor(DType::F32, {2}, IRType::Float, 2), "goodtensor", exits.linking);
}

}  // namespace
}  // namespace tessera::jit
