// Both host tiers (T1: AsmjitBackend, T2: LlvmBackend): traces built by hand
// with TraceIR's builder, compiled, and run on real Values; results checked
// against the same computation in C++. Every test runs on each backend:
// loops, arithmetic, guards, lists, globals and the exits that build sunk
// objects here; tensors, calls and what a backend rejects in
// host_backend_calls_test.cpp.
#include "tests/codegen/host_backend_fixture.h"

namespace tessera::jit {
namespace {

// i from 0 while i < n: s += i*i % 7. Exits through a GUARDF when i >= n.
TEST_P(HostBackendTest, IntCountingLoop) {
  TraceIR ir;
  const uint16_t s0 = snap(ir, {});
  IRRef i = sload(ir, IRType::Int, 0, s0);
  IRRef n = sload(ir, IRType::Int, 1, s0);
  IRRef s = sload(ir, IRType::Int, 2, s0);
  ir.emit(IROp::LOOP, IRType::None);
  const uint16_t s1 = snap(ir, {{0, i}, {2, s}});
  IRRef done = ir.emit(IROp::GE, IRType::Bool, i, n);
  ir.emit(IROp::GUARDF, IRType::None, done, 0, s1);
  IRRef sq = ir.emit(IROp::MUL, IRType::Int, i, i);
  IRRef m = ir.emit(IROp::IMOD, IRType::Int, sq, ir.kint(7));
  IRRef s2 = ir.emit(IROp::ADD, IRType::Int, s, m);
  IRRef i2 = ir.emit(IROp::ADD, IRType::Int, i, ir.kint(1));
  ir.emit(IROp::PHI, IRType::Int, i, i2);
  ir.emit(IROp::PHI, IRType::Int, s, s2);

  auto owned = make_backend();
  HostBackend& be = *owned;
  CompiledTrace t = be.compile(ir, "count");
  report("int counting loop", t);
  ASSERT_NE(t.fn, nullptr);

  Runner r;
  r.regs = {Value::integer(0), Value::integer(1000), Value::integer(0)};
  EXPECT_EQ(r.run(t.fn), 1u);
  int64_t expect = 0;
  for (int64_t k = 0; k < 1000; ++k) expect += k * k % 7;
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[0]), 1000);
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[1]), expect);
  // Scalars reach slots only through the caller: the trace left them alone.
  EXPECT_EQ(r.regs[0].as_int(), 0);
  EXPECT_EQ(r.regs[2].as_int(), 0);

  // Starting at the end: exits on the first check with the entry values.
  r.regs = {Value::integer(5), Value::integer(3), Value::integer(-4)};
  EXPECT_EQ(r.run(t.fn), 1u);
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[0]), 5);
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[1]), -4);
}

// Mandelbrot step: x, y = x*x - y*y + cx, 2*x*y + cy while k < n and
// x*x + y*y <= 4. Results must be bit-identical to C++.
TEST_P(HostBackendTest, FloatLoopBitExact) {
  TraceIR ir;
  const uint16_t s0 = snap(ir, {});
  IRRef x = sload(ir, IRType::Float, 0, s0);
  IRRef y = sload(ir, IRType::Float, 1, s0);
  IRRef cx = sload(ir, IRType::Float, 2, s0);
  IRRef cy = sload(ir, IRType::Float, 3, s0);
  IRRef k = sload(ir, IRType::Int, 4, s0);
  IRRef n = sload(ir, IRType::Int, 5, s0);
  ir.emit(IROp::LOOP, IRType::None);
  const uint16_t s1 = snap(ir, {{0, x}, {1, y}, {4, k}});
  ir.emit(IROp::GUARDT, IRType::None, ir.emit(IROp::LT, IRType::Bool, k, n), 0, s1);
  IRRef xx = ir.emit(IROp::FMUL, IRType::Float, x, x);
  IRRef yy = ir.emit(IROp::FMUL, IRType::Float, y, y);
  IRRef x2 = ir.emit(IROp::FADD, IRType::Float, ir.emit(IROp::FSUB, IRType::Float, xx, yy), cx);
  IRRef two_x = ir.emit(IROp::FMUL, IRType::Float, ir.kfloat(2.0), x);
  IRRef y2 = ir.emit(IROp::FADD, IRType::Float, ir.emit(IROp::FMUL, IRType::Float, two_x, y), cy);
  IRRef k2 = ir.emit(IROp::ADD, IRType::Int, k, ir.kint(1));
  IRRef mag = ir.emit(IROp::FADD, IRType::Float, ir.emit(IROp::FMUL, IRType::Float, x2, x2),
                      ir.emit(IROp::FMUL, IRType::Float, y2, y2));
  const uint16_t s2 = snap(ir, {{0, x2}, {1, y2}, {4, k2}});
  ir.emit(IROp::GUARDT, IRType::None, ir.emit(IROp::LE, IRType::Bool, mag, ir.kfloat(4.0)), 0, s2);
  ir.emit(IROp::PHI, IRType::Float, x, x2);
  ir.emit(IROp::PHI, IRType::Float, y, y2);
  ir.emit(IROp::PHI, IRType::Int, k, k2);

  auto owned = make_backend();
  HostBackend& be = *owned;
  CompiledTrace t = be.compile(ir, "mandel");
  report("mandelbrot step", t);

  const double points[][2] = {{-0.1, 0.65}, {-0.75, 0.1}, {0.3, 0.5}, {-1.2, 0.2}, {0.26, 0.0}};
  for (const auto& p : points) {
    // The reference: the same operations in the same order.
    double ex = 0, ey = 0;
    int64_t ek = 0;
    uint32_t eexit = 1;
    while (true) {
      if (!(ek < 200)) break;
      double nx = (ex * ex - ey * ey) + p[0];
      double ny = (2.0 * ex) * ey + p[1];
      ++ek;
      ex = nx;
      ey = ny;
      if (!(ex * ex + ey * ey <= 4.0)) {
        eexit = 2;
        break;
      }
    }
    Runner r;
    r.regs = {Value::number(0), Value::number(0), Value::number(p[0]), Value::number(p[1]),
              Value::integer(0), Value::integer(200)};
    EXPECT_EQ(r.run(t.fn), eexit);
    EXPECT_EQ(r.exit_vals[0], std::bit_cast<uint64_t>(ex)) << as_double(r.exit_vals[0]) << " vs " << ex;
    EXPECT_EQ(r.exit_vals[1], std::bit_cast<uint64_t>(ey));
    EXPECT_EQ(static_cast<int64_t>(r.exit_vals[2]), ek);
  }
}

// A trace that computes op(slot0, slot1) once and exits through snapshot 1
// with the result: for checking single operations on runtime values.
CompiledTrace binop_trace(HostBackend& be, IROp op, IRType in, IRType out) {
  TraceIR ir;
  const uint16_t s0 = snap(ir, {});
  IRRef a = sload(ir, in, 0, s0);
  IRRef b = sload(ir, in, 1, s0);
  ir.emit(IROp::LOOP, IRType::None);
  IRRef v = ir.emit(op, out, a, b);
  const uint16_t s1 = snap(ir, {{2, v}});
  ir.emit(IROp::GUARDT, IRType::None, ir.kbool(false), 0, s1);
  return be.compile(ir, ir_op_info(op).name);
}

TEST_P(HostBackendTest, FlooredIntDivMod) {
  auto owned = make_backend();
  HostBackend& be = *owned;
  CompiledTrace div = binop_trace(be, IROp::IDIV, IRType::Int, IRType::Int);
  CompiledTrace mod = binop_trace(be, IROp::IMOD, IRType::Int, IRType::Int);
  CompiledTrace pow = binop_trace(be, IROp::IPOW, IRType::Int, IRType::Int);
  const int64_t vals[] = {7, -7, 3, -3, 1, -1, 0, 6, -6, INT64_MIN, INT64_MAX, INT64_MIN + 1};
  Runner r;
  for (int64_t a : vals) {
    for (int64_t b : vals) {
      r.regs = {Value::integer(a), Value::integer(b), Value::nil()};
      ASSERT_EQ(r.run(div.fn), 1u);
      const int64_t q = static_cast<int64_t>(r.exit_vals[0]);
      ASSERT_EQ(r.run(mod.fn), 1u);
      const int64_t m = static_cast<int64_t>(r.exit_vals[0]);
      if (b == 0) {
        // Never reached in practice (the recorder guards b != 0): no trap, 0.
        EXPECT_EQ(q, 0);
        EXPECT_EQ(m, 0);
      } else {
        EXPECT_EQ(q, int_floordiv(a, b)) << a << " // " << b;
        EXPECT_EQ(m, int_mod(a, b)) << a << " % " << b;
      }
    }
  }
  r.regs = {Value::integer(INT64_MIN), Value::integer(-1), Value::nil()};
  ASSERT_EQ(r.run(div.fn), 1u);
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[0]), INT64_MIN);
  ASSERT_EQ(r.run(mod.fn), 1u);
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[0]), 0);
  r.regs = {Value::integer(-7), Value::integer(2), Value::nil()};
  ASSERT_EQ(r.run(div.fn), 1u);
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[0]), -4);
  ASSERT_EQ(r.run(mod.fn), 1u);
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[0]), 1);
  r.regs = {Value::integer(3), Value::integer(41), Value::nil()};
  ASSERT_EQ(r.run(pow.fn), 1u);
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[0]), int_pow(3, 41));
}

TEST_P(HostBackendTest, FloatFloorDivModPowAndCompare) {
  auto owned = make_backend();
  HostBackend& be = *owned;
  CompiledTrace fdiv = binop_trace(be, IROp::FFLOORDIV, IRType::Float, IRType::Float);
  CompiledTrace fmod = binop_trace(be, IROp::FMOD, IRType::Float, IRType::Float);
  CompiledTrace fpow = binop_trace(be, IROp::FPOW, IRType::Float, IRType::Float);
  CompiledTrace ne = binop_trace(be, IROp::NE, IRType::Float, IRType::Bool);
  CompiledTrace eq = binop_trace(be, IROp::EQ, IRType::Float, IRType::Bool);
  const double nan = std::nan("");
  const double vals[] = {7.5, -7.5, 2.0, -2.0, 0.1, 1.0, 0.0, -0.0, INFINITY, nan};
  Runner r;
  for (double a : vals) {
    for (double b : vals) {
      r.regs = {Value::number(a), Value::number(b), Value::nil()};
      ASSERT_EQ(r.run(fdiv.fn), 1u);
      EXPECT_EQ(r.exit_vals[0], std::bit_cast<uint64_t>(float_floordiv(a, b))) << a << " // " << b;
      ASSERT_EQ(r.run(fmod.fn), 1u);
      EXPECT_EQ(r.exit_vals[0], std::bit_cast<uint64_t>(float_mod(a, b))) << a << " % " << b;
      ASSERT_EQ(r.run(fpow.fn), 1u);
      EXPECT_EQ(r.exit_vals[0], std::bit_cast<uint64_t>(float_pow(a, b)));
      ASSERT_EQ(r.run(ne.fn), 1u);
      EXPECT_EQ(r.exit_vals[0], a != b ? 1u : 0u) << a << " != " << b;
      ASSERT_EQ(r.run(eq.fn), 1u);
      EXPECT_EQ(r.exit_vals[0], a == b ? 1u : 0u) << a << " == " << b;
    }
  }
}

TEST_P(HostBackendTest, FloatMathAndConv) {
  TraceIR ir;
  const uint16_t s0 = snap(ir, {});
  IRRef i = sload(ir, IRType::Int, 0, s0);
  ir.emit(IROp::LOOP, IRType::None);
  IRRef f = ir.emit(IROp::CONV, IRType::Float, i);
  std::vector<SnapshotEntry> entries;
  for (uint32_t fn = 0; fn < static_cast<uint32_t>(FloatMath::NumFns); ++fn)
    entries.push_back({fn + 1, ir.emit(IROp::FMATH, IRType::Float, f, fn)});
  const uint16_t s1 = snap(ir, entries);
  ir.emit(IROp::GUARDT, IRType::None, ir.kbool(false), 0, s1);
  auto owned = make_backend();
  HostBackend& be = *owned;
  CompiledTrace t = be.compile(ir, "fmath");
  Runner r;
  r.regs = {Value::integer(3)};
  ASSERT_EQ(r.run(t.fn), 1u);
  const double x = 3.0;
  // The *_f32 rows are the tensor kernels' f32 functions of the argument rounded to f32.
  auto f32 = [&](Unary op) { return static_cast<double>(vmath::unary_one(op, static_cast<float>(x))); };
  const double expect[] = {std::sqrt(x), std::exp(x), std::log(x), std::sin(x), std::cos(x), std::tanh(x), std::erf(x),
                           x + std::log1p(std::exp(-x)), f32(Unary::Exp), f32(Unary::Log), f32(Unary::Sin),
                           f32(Unary::Cos), f32(Unary::Tanh)};
  static_assert(std::size(expect) == static_cast<size_t>(FloatMath::NumFns), "a FloatMath function without a test");
  for (size_t k = 0; k < std::size(expect); ++k)
    EXPECT_EQ(r.exit_vals[k], std::bit_cast<uint64_t>(expect[k])) << float_math_name(static_cast<FloatMath>(k));
}

// Slot 0 holds a float where the trace expects an int: the first guard fails
// and the trace leaves through snapshot 0 before anything else happens.
TEST_P(HostBackendTest, SloadTypeGuardExitsFirst) {
  TraceIR ir;
  const uint16_t s0 = snap(ir, {});
  IRRef a = sload(ir, IRType::Int, 0, s0);
  IRRef l = sload(ir, IRType::List, 1, s0);
  ir.emit(IROp::LOOP, IRType::None);
  ir.emit(IROp::SSTORE, IRType::None, 2, l);
  const uint16_t s1 = snap(ir, {{0, a}});
  ir.emit(IROp::GUARDT, IRType::None, ir.kbool(false), 0, s1);
  auto owned = make_backend();
  HostBackend& be = *owned;
  CompiledTrace t = be.compile(ir, "tyguard");
  Runner r;
  Value list = make_list({Value::integer(1)});
  r.regs = {Value::number(1.5), list, Value::integer(9)};
  r.exit_vals[0] = 0xdeadbeef;
  EXPECT_EQ(r.run(t.fn), 0u);
  EXPECT_EQ(r.exit_vals[0], 0xdeadbeefu);
  EXPECT_TRUE(r.regs[2].is_int());  // the SSTORE did not run
  EXPECT_EQ(list.as_list()->refcount, 2u);
  // With an int it runs through.
  r.regs[0] = Value::integer(4);
  EXPECT_EQ(r.run(t.fn), 1u);
  EXPECT_EQ(r.exit_vals[0], 4u);
  EXPECT_TRUE(r.regs[2].is_list());
  EXPECT_EQ(list.as_list()->refcount, 3u);
}

TEST_P(HostBackendTest, ListLoadStoreAndBounds) {
  ListTrace lt;
  auto owned = make_backend();
  HostBackend& be = *owned;
  CompiledTrace t = be.compile(lt.ir, "lists");
  report("list loop", t);
  std::vector<Value> items;
  for (int k = 0; k < 50; ++k) items.push_back(Value::integer(k * 3 - 20));
  Value src = make_list(items);
  Value dst = make_list(std::vector<Value>(50, Value::nil()));
  Runner r;
  r.regs = {src, dst, Value::integer(0), Value::integer(0)};
  EXPECT_EQ(r.run(t.fn), 1u);
  int64_t sum = 0;
  for (int k = 0; k < 50; ++k) sum += k * 3 - 20;
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[0]), 50);
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[1]), sum);
  for (int k = 0; k < 50; ++k) {
    ASSERT_TRUE(dst.as_list()->items[k].is_float());
    EXPECT_EQ(dst.as_list()->items[k].as_float(), double(k * 3 - 20));
  }

  // dst too short: out of bounds exits through snapshot 3 at i == 10.
  Value short_dst = make_list(std::vector<Value>(10, Value::nil()));
  r.regs = {src, short_dst, Value::integer(0), Value::integer(0)};
  EXPECT_EQ(r.run(t.fn), 3u);
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[0]), 10);
  // Negative index: ULT fails, exit 1.
  r.regs = {src, dst, Value::integer(-1), Value::integer(0)};
  EXPECT_EQ(r.run(t.fn), 1u);
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[0]), -1);
  // A float element: the LLOAD tag guard exits through snapshot 2 there.
  src.as_list()->items[7] = Value::number(0.5);
  r.regs = {src, dst, Value::integer(0), Value::integer(0)};
  EXPECT_EQ(r.run(t.fn), 2u);
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[0]), 7);
  // LSTORE of an object and of floats keeps refcounts right.
  EXPECT_EQ(src.as_list()->refcount, 2u);  // src + r.regs[0]
}

// for i in range(1, 9): v[i] = u[i - 1] + u[i + 1] - u[i], and with `push`
// also push(v, u[i]) in the same iteration. Without the push no instruction of
// the body can move a list's storage, so T2 reads both storage pointers once
// before the loop (Lowering::hoist_list_storage) and addresses u[i +- 1] off
// one shift of i; with it, v's storage moves while the loop runs.
// Exits: 1 out of bounds, 2 an element that is not a float, 3 the loop's end.
TraceIR stencil_trace(bool push) {
  TraceIR ir;
  const uint16_t s0 = snap(ir, {});
  IRRef u = sload(ir, IRType::List, 0, s0);
  IRRef v = sload(ir, IRType::List, 1, s0);
  IRRef i = sload(ir, IRType::Int, 2, s0);
  ir.emit(IROp::LOOP, IRType::None);
  const uint16_t s1 = snap(ir, {{2, i}});
  const uint16_t s2 = snap(ir, {{2, i}});
  IRRef lo = ir.emit(IROp::SUB, IRType::Int, i, ir.kint(1));
  IRRef hi = ir.emit(IROp::ADD, IRType::Int, i, ir.kint(1));
  IRRef nu = ir.emit(IROp::LLEN, IRType::Int, u);
  for (IRRef k : {lo, i, hi}) ir.emit(IROp::GUARDT, IRType::None, ir.emit(IROp::ULT, IRType::Bool, k, nu), 0, s1);
  IRRef a = ir.emit(IROp::LLOAD, IRType::Float, u, lo, s2);
  IRRef b = ir.emit(IROp::LLOAD, IRType::Float, u, hi, s2);
  IRRef c = ir.emit(IROp::LLOAD, IRType::Float, u, i, s2);
  IRRef nv = ir.emit(IROp::LLEN, IRType::Int, v);
  ir.emit(IROp::GUARDT, IRType::None, ir.emit(IROp::ULT, IRType::Bool, i, nv), 0, s1);
  IRRef sum = ir.emit(IROp::FSUB, IRType::Float, ir.emit(IROp::FADD, IRType::Float, a, b), c);
  ir.emit(IROp::LSTORE, IRType::None, ir.emit(IROp::LREF, IRType::None, v, i), sum);
  if (push) ir.emit(IROp::LPUSH, IRType::None, v, c, s1);
  IRRef i2 = ir.emit(IROp::ADD, IRType::Int, i, ir.kint(1));
  ir.emit(IROp::GUARDT, IRType::None, ir.emit(IROp::LT, IRType::Bool, i2, ir.kint(9)), 0, snap(ir, {{2, i2}}));
  ir.emit(IROp::PHI, IRType::Int, i, i2);
  return ir;
}

std::vector<Value> float_values(const std::vector<double>& xs) {
  std::vector<Value> out;
  for (double x : xs) out.push_back(Value::number(x));
  return out;
}

std::vector<double> floats_of(const Value& list) {
  std::vector<double> out;
  for (const Value& x : list.as_list()->items) out.push_back(x.as_float());
  return out;
}

TEST_P(HostBackendTest, StencilLoopOverTwoLists) {
  auto owned = make_backend();
  CompiledTrace t = owned->compile(stencil_trace(false), "stencil");
  report("stencil loop", t);
  std::vector<double> u(12), v(12, -1.0);
  for (int k = 0; k < 12; ++k) u[k] = k * k * 0.5;
  std::vector<double> want = v;
  for (int k = 1; k < 9; ++k) want[k] = u[k - 1] + u[k + 1] - u[k];
  Value lu = make_list(float_values(u)), lv = make_list(float_values(v));
  Runner r;
  r.regs = {lu, lv, Value::integer(1)};
  EXPECT_EQ(r.run(t.fn), 3u);
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[0]), 9);
  EXPECT_EQ(floats_of(lv), want);
  EXPECT_EQ(floats_of(lu), u);
}

// u and v one list: each store is seen by the next iteration's u[i - 1].
TEST_P(HostBackendTest, StencilLoopOverOneListSeesItsStores) {
  auto owned = make_backend();
  CompiledTrace t = owned->compile(stencil_trace(false), "stencil-aliased");
  std::vector<double> u(12);
  for (int k = 0; k < 12; ++k) u[k] = 1.0 + k * 0.25;
  std::vector<double> want = u;
  for (int k = 1; k < 9; ++k) want[k] = want[k - 1] + want[k + 1] - want[k];
  Value l = make_list(float_values(u));
  Runner r;
  r.regs = {l, l, Value::integer(1)};
  EXPECT_EQ(r.run(t.fn), 3u);
  EXPECT_EQ(floats_of(l), want);
}

// A push in the body moves v's storage (it starts full): the stores after it
// must land in the new storage, so nothing may keep v's old pointer.
TEST_P(HostBackendTest, StencilLoopWithPushStoresIntoMovedStorage) {
  auto owned = make_backend();
  CompiledTrace t = owned->compile(stencil_trace(true), "stencil-push");
  std::vector<double> u(12), v(12, -1.0);
  for (int k = 0; k < 12; ++k) u[k] = 3.0 - k;
  std::vector<double> want = v;
  for (int k = 1; k < 9; ++k) {
    want[k] = u[k - 1] + u[k + 1] - u[k];
    want.push_back(u[k]);
  }
  Value lu = make_list(float_values(u)), lv = make_list(float_values(v));
  lv.as_list()->items.shrink_to_fit();
  Runner r;
  r.regs = {lu, lv, Value::integer(1)};
  EXPECT_EQ(r.run(t.fn), 3u);
  EXPECT_EQ(floats_of(lv), want);
}

// j = i + 1 computed before LOOP and carried by a PHI (a peeled loop's
// index): in the body u[j] is addressed off the PHI, not rebuilt from i + 1
// (T2 folds x + K into the address only for an index of the same region).
TEST_P(HostBackendTest, CarriedIndexDefinedBeforeTheLoopIsNotRebuilt) {
  TraceIR ir;
  const uint16_t s0 = snap(ir, {});
  IRRef u = sload(ir, IRType::List, 0, s0);
  IRRef i = sload(ir, IRType::Int, 1, s0);
  IRRef acc = sload(ir, IRType::Float, 2, s0);
  IRRef j = ir.emit(IROp::ADD, IRType::Int, i, ir.kint(1));
  ir.emit(IROp::LOOP, IRType::None);
  const uint16_t s1 = snap(ir, {{1, j}, {2, acc}});
  ir.emit(IROp::GUARDT, IRType::None, ir.emit(IROp::ULT, IRType::Bool, j, ir.emit(IROp::LLEN, IRType::Int, u)), 0, s1);
  IRRef x = ir.emit(IROp::LLOAD, IRType::Float, u, j, s1);
  IRRef acc2 = ir.emit(IROp::FADD, IRType::Float, acc, x);
  IRRef j2 = ir.emit(IROp::ADD, IRType::Int, j, ir.kint(1));
  ir.emit(IROp::GUARDT, IRType::None, ir.emit(IROp::LT, IRType::Bool, j2, ir.kint(9)), 0,
          snap(ir, {{1, j2}, {2, acc2}}));
  ir.emit(IROp::PHI, IRType::Int, j, j2);
  ir.emit(IROp::PHI, IRType::Float, acc, acc2);
  auto owned = make_backend();
  CompiledTrace t = owned->compile(ir, "carried-index");
  std::vector<double> xs(12);
  for (int k = 0; k < 12; ++k) xs[k] = 1.0 + k * k;
  Value l = make_list(float_values(xs));
  Runner r;
  r.regs = {l, Value::integer(0), Value::number(0.0)};
  EXPECT_EQ(r.run(t.fn), 2u);
  double want = 0;
  for (int k = 1; k < 9; ++k) want += xs[k];
  EXPECT_EQ(static_cast<int64_t>(r.exit_vals[0]), 9);
  EXPECT_EQ(as_double(r.exit_vals[1]), want);
}

TEST_P(HostBackendTest, GlobalLoadGuardAndStore) {
  TraceIR ir;
  const uint16_t s0 = snap(ir, {});
  IRRef g = ir.emit(IROp::GLOAD, IRType::Int, 0, 0, s0);
  ir.emit(IROp::LOOP, IRType::None);
  IRRef g2 = ir.emit(IROp::MUL, IRType::Int, g, ir.kint(2));
  ir.emit(IROp::GSTORE, IRType::None, 1, g2);
  const uint16_t s1 = snap(ir, {{0, g}});
  ir.emit(IROp::GUARDT, IRType::None, ir.kbool(false), 0, s1);
  auto owned = make_backend();
  HostBackend& be = *owned;
  CompiledTrace t = be.compile(ir, "globals");
  Runner r;
  r.regs = {Value::nil()};
  r.globals = {Value::integer(21), make_str("old")};
  EXPECT_EQ(r.run(t.fn), 1u);
  EXPECT_EQ(r.exit_vals[0], 21u);
  ASSERT_TRUE(r.globals[1].is_int());  // the string was released
  EXPECT_EQ(r.globals[1].as_int(), 42);
  r.globals[0] = make_str("not an int");
  EXPECT_EQ(r.run(t.fn), 0u);
  r.globals[0] = Value::undef();
  EXPECT_EQ(r.run(t.fn), 0u);
}

TEST_P(HostBackendTest, SstoreListRefcounts) {
  TraceIR ir;
  const uint16_t s0 = snap(ir, {});
  IRRef l = sload(ir, IRType::List, 0, s0);
  ir.emit(IROp::LOOP, IRType::None);
  ir.emit(IROp::SSTORE, IRType::None, 1, l);
  ir.emit(IROp::SSTORE, IRType::None, 2, l);
  ir.emit(IROp::SSTORE, IRType::None, 0, l);  // into the slot that holds it
  ir.emit(IROp::SSTORE, IRType::None, 3, ir.kint(5));
  const uint16_t s1 = snap(ir, {{0, l}});
  ir.emit(IROp::GUARDT, IRType::None, ir.kbool(false), 0, s1);
  auto owned = make_backend();
  HostBackend& be = *owned;
  CompiledTrace t = be.compile(ir, "sstore");
  Value list = make_list({Value::integer(1), Value::integer(2)});
  Value other = make_list({});
  Runner r;
  r.regs = {list, Value::integer(0), other, make_str("gone")};
  EXPECT_EQ(other.as_list()->refcount, 2u);
  EXPECT_EQ(r.run(t.fn), 1u);
  EXPECT_EQ(r.exit_vals[0], reinterpret_cast<uint64_t>(list.as_list()));
  EXPECT_EQ(list.as_list()->refcount, 4u);   // list + slots 0, 1, 2
  EXPECT_EQ(other.as_list()->refcount, 1u);  // slot 2 released it
  EXPECT_EQ(r.regs[1].as_list(), list.as_list());
  EXPECT_EQ(r.regs[3].as_int(), 5);
  r.regs.clear();
  EXPECT_EQ(list.as_list()->refcount, 1u);
}

// A sunk list (VNEWLIST, optimizer/alloc_sink.h) exists only at the exits
// that name it: the exit builds [a, f, s] into register 3, releasing what
// the register held, and the elements are owned by the new list too.
TEST_P(HostBackendTest, ExitBuildsSunkList) {
  TraceIR ir;
  const uint16_t s0 = snap(ir, {});
  IRRef a = sload(ir, IRType::Int, 0, s0);
  IRRef f = sload(ir, IRType::Float, 1, s0);
  IRRef str = sload(ir, IRType::Str, 2, s0);
  IRRef list = ir.emit(IROp::VNEWLIST, IRType::List, carg_chain(ir, {a, f, str}), 3);
  IRRef g = ir.emit(IROp::ADD, IRType::Int, a, ir.kint(1));
  const uint16_t s1 = snap(ir, {{3, list}, {4, g}});
  ir.emit(IROp::EXIT, IRType::None, 0, 0, s1);
  auto owned = make_backend();
  HostBackend& be = *owned;
  {
    // Unlinked exits hand the exit plan's values back in exit_vals, and the
    // C++ side runs the same plan the linked exit runs.
    CompiledTrace u = be.compile(ir, "sunk-unlinked");
    Value s = make_str("elem");
    Runner r;
    r.regs = {Value::integer(41), Value::number(0.5), s, Value::nil(), Value::nil()};
    ASSERT_EQ(r.run(u.fn), 1u);
    ASSERT_NE(u.exit_plans, nullptr);
    execute_exit_plan((*u.exit_plans)[1], r.exit_vals, r.regs.data());
    ASSERT_TRUE(r.regs[3].is_list());
    ASSERT_EQ(r.regs[3].as_list()->items.size(), 3u);
    EXPECT_EQ(r.regs[3].as_list()->items[0].as_int(), 41);
    EXPECT_EQ(r.regs[3].as_list()->items[2].as_str(), s.as_str());
    EXPECT_EQ(r.regs[4].as_int(), 42);
  }
  ReturningExits exits;
  CompiledTrace t = be.compile(ir, "sunk", exits.linking);
  Value s = make_str("elem");
  Value old = make_list({});
  Runner r;
  r.regs = {Value::integer(41), Value::number(0.5), s, old, Value::nil()};
  EXPECT_EQ(old.as_list()->refcount, 2u);
  EXPECT_EQ(r.run(t.fn), (7u << 16) | 1u);
  ASSERT_TRUE(r.regs[3].is_list());
  const auto& items = r.regs[3].as_list()->items;
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].as_int(), 41);
  EXPECT_EQ(items[1].as_float(), 0.5);
  EXPECT_EQ(items[2].as_str(), s.as_str());
  EXPECT_EQ(r.regs[4].as_int(), 42);
  EXPECT_EQ(old.as_list()->refcount, 1u);  // the register let go of it
  EXPECT_EQ(s.as_str()->refcount, 3u);     // s, register 2, the new list
  r.regs.clear();
  EXPECT_EQ(s.as_str()->refcount, 1u);
}

// A sunk tensor (VNEWTENSOR) named by two registers of the exit's snapshot,
// as after `u = t`: the exit builds one tensor and stores it into both (the
// program may mutate it through either name), releasing what they held.
// Register 2 gets one of its elements too, which the helper call must keep.
TEST_P(HostBackendTest, ExitBuildsOneSunkTensorForTwoRegisters) {
  TraceIR ir;
  const uint16_t s0 = snap(ir, {});
  IRRef x = sload(ir, IRType::Float, 0, s0);
  IRRef sq = ir.emit(IROp::F32RND, IRType::Float, ir.emit(IROp::FMUL, IRType::Float, x, x));
  IRRef inc = ir.emit(IROp::F32RND, IRType::Float, ir.emit(IROp::FADD, IRType::Float, x, ir.kfloat(1.0)));
  ir.virtual_tensors().push_back(VirtualTensor{DType::F32, {3}});
  IRRef t = ir.emit(IROp::VNEWTENSOR, IRType::Tensor, carg_chain(ir, {sq, inc, ir.kfloat(-2.5)}), 0);
  const uint16_t s1 = snap(ir, {{1, t}, {2, inc}, {3, t}});
  ir.emit(IROp::EXIT, IRType::None, 0, 0, s1);
  auto owned = make_backend();
  HostBackend& be = *owned;
  ReturningExits exits;
  CompiledTrace t_code = be.compile(ir, "sunk_tensor", exits.linking);
  Value old_list = make_list({});
  Value old_str = make_str("old");
  Runner r;
  r.regs = {Value::number(0.1), old_list, Value::nil(), old_str};
  EXPECT_EQ(r.run(t_code.fn), (7u << 16) | 1u);
  ASSERT_TRUE(r.regs[1].is_tensor());
  ASSERT_TRUE(r.regs[3].is_tensor());
  const TensorObj* tensor = r.regs[1].as_tensor();
  EXPECT_EQ(r.regs[3].as_tensor(), tensor);
  EXPECT_EQ(tensor->refcount, 2u);
  EXPECT_EQ(tensor->dtype, DType::F32);
  EXPECT_EQ(tensor->shape, Shape{3});
  const double inc_f32 = static_cast<float>(0.1 + 1.0);
  EXPECT_EQ(tensor->get_f(0), static_cast<float>(0.1 * 0.1));
  EXPECT_EQ(tensor->get_f(1), inc_f32);
  EXPECT_EQ(tensor->get_f(2), -2.5);
  ASSERT_TRUE(r.regs[2].is_float());
  EXPECT_EQ(r.regs[2].as_float(), inc_f32);
  EXPECT_EQ(old_list.as_list()->refcount, 1u);  // the registers let go of them
  EXPECT_EQ(old_str.as_str()->refcount, 1u);
}

// An i64 tensor of shape [2, 2] and a rank-0 i32 tensor (set_i wraps) built
// by one exit, with a sunk list beside them: each in its own register.
TEST_P(HostBackendTest, ExitBuildsSunkIntTensors) {
  TraceIR ir;
  const uint16_t s0 = snap(ir, {});
  IRRef a = sload(ir, IRType::Int, 0, s0);
  IRRef a1 = ir.emit(IROp::ADD, IRType::Int, a, ir.kint(1));
  IRRef a2 = ir.emit(IROp::MUL, IRType::Int, a, ir.kint(2));
  ir.virtual_tensors().push_back(VirtualTensor{DType::I64, {2, 2}});
  ir.virtual_tensors().push_back(VirtualTensor{DType::I32, {}});
  IRRef mat = ir.emit(IROp::VNEWTENSOR, IRType::Tensor, carg_chain(ir, {a, a1, a2, ir.kint(-7)}), 0);
  IRRef scalar = ir.emit(IROp::VNEWTENSOR, IRType::Tensor, carg_chain(ir, {ir.kint((int64_t{1} << 32) + 5)}), 1);
  IRRef list = ir.emit(IROp::VNEWLIST, IRType::List, carg_chain(ir, {a2}), 1);
  const uint16_t s1 = snap(ir, {{1, mat}, {2, list}, {3, scalar}, {4, a1}});
  ir.emit(IROp::EXIT, IRType::None, 0, 0, s1);
  auto owned = make_backend();
  HostBackend& be = *owned;
  ReturningExits exits;
  CompiledTrace t = be.compile(ir, "sunk_int_tensor", exits.linking);
  Runner r;
  r.regs = {Value::integer(int64_t{1} << 40), Value::nil(), Value::nil(), Value::nil(), Value::nil()};
  EXPECT_EQ(r.run(t.fn), (7u << 16) | 1u);
  const int64_t v = int64_t{1} << 40;
  ASSERT_TRUE(r.regs[1].is_tensor());
  const TensorObj& m = *r.regs[1].as_tensor();
  EXPECT_EQ(m.refcount, 1u);
  EXPECT_EQ(m.dtype, DType::I64);
  EXPECT_EQ(m.shape, (Shape{2, 2}));
  const int64_t expect[] = {v, v + 1, 2 * v, -7};
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(m.get_i(i), expect[i]) << i;
  ASSERT_TRUE(r.regs[3].is_tensor());
  const TensorObj& sc = *r.regs[3].as_tensor();
  EXPECT_EQ(sc.dtype, DType::I32);
  EXPECT_TRUE(sc.shape.empty());
  EXPECT_EQ(sc.get_i(0), 5);
  ASSERT_TRUE(r.regs[2].is_list());
  EXPECT_EQ(r.regs[2].as_list()->items.at(0).as_int(), 2 * v);
  EXPECT_EQ(r.regs[4].as_int(), v + 1);
}

// F32RND: the double rounded to the nearest binary32 (ties to even),
// overflow to infinity, NaN kept, as (double)(float)x does with IEEE
// arithmetic; on a runtime value and on a constant.
TEST_P(HostBackendTest, F32RoundingMatchesFloatCast) {
  TraceIR ir;
  const uint16_t s0 = snap(ir, {});
  IRRef x = sload(ir, IRType::Float, 0, s0);
  ir.emit(IROp::LOOP, IRType::None);
  IRRef rx = ir.emit(IROp::F32RND, IRType::Float, x);
  IRRef rk = ir.emit(IROp::F32RND, IRType::Float, ir.kfloat(0.1));
  const uint16_t s1 = snap(ir, {{1, rx}, {2, rk}});
  ir.emit(IROp::GUARDT, IRType::None, ir.kbool(false), 0, s1);
  auto owned = make_backend();
  HostBackend& be = *owned;
  CompiledTrace t = be.compile(ir, "f32rnd");
  const double sub_min = std::ldexp(1.0, -149);  // the smallest f32 subnormal
  const struct {
    double in, out;
  } cases[] = {
      {0.1, static_cast<double>(0.1f)},
      {1e300, INFINITY},
      {-1e300, -INFINITY},
      {1.5, 1.5},
      {-0.0, -0.0},
      {sub_min, sub_min},
      {std::ldexp(1.0, -151), 0.0},           // below half the smallest subnormal
      {1.5 * sub_min, 2 * sub_min},           // a tie: to even
      {1.0 + std::ldexp(1.0, -24), 1.0},      // a tie: to even
      {std::ldexp(0x1FFFFFF, 103), INFINITY},  // halfway from FLT_MAX to 2^128: to even
      {16777217.0, 16777216.0},
  };
  Runner r;
  r.regs = {Value::nil()};
  for (const auto& c : cases) {
    r.regs[0] = Value::number(c.in);
    ASSERT_EQ(r.run(t.fn), 1u);
    EXPECT_EQ(r.exit_vals[0], std::bit_cast<uint64_t>(c.out)) << c.in << " -> " << as_double(r.exit_vals[0]);
    EXPECT_EQ(as_double(r.exit_vals[1]), static_cast<double>(0.1f));
  }
  r.regs[0] = Value::number(std::nan(""));
  ASSERT_EQ(r.run(t.fn), 1u);
  EXPECT_TRUE(std::isnan(as_double(r.exit_vals[0])));
}

INSTANTIATE_TEST_SUITE_P(Tiers, HostBackendTest, ::testing::Values("asmjit", "llvm"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });


}  // namespace
}  // namespace tessera::jit
