// TensorSinkPass, IR in / IR out: small tensors whose dtype and shape the
// trace knows become their elements (scalar instructions computing them as
// the CPU kernels do), exits after them name them (VNEWTENSOR), and what
// reads them reads the elements; and where they must stay allocated.
#include <gtest/gtest.h>

#include <string>

#include "optimizer/tensor_sink.h"
#include "tests/optimizer/pass_test_support.h"
#include "vm/graph/op_table.h"

namespace tessera::jit {
namespace {

using passtest::apply;

// x, y floats: t = tensor([x, y]); u = t * 0.1; r = item(sum(u)); leave if
// r < x. Linear (a side trace); no function, so every register counts as
// live at every exit.
const char* kFloatLiteral =
      "0000    flt  KFLOAT 0.1\n"
      "0001 >  flt  SLOAD  0  0  #0\n"
      "0002 >  flt  SLOAD  1  0  #0\n"
      "0003    none CARG   0001  0002\n"
      "0004    none CALL   0003  0  #1\n"
      "0005 >  list SLOAD  3  1  #2\n"
      "0006    none CALL   0005  1  #2\n"
      "0007 >  tens SLOAD  2  1  #3\n"
      "0008    none CARG   0007  0000\n"
      "0009    none CALL   0008  2  #3\n"
      "0010 >  tens SLOAD  4  1  #4\n"
      "0011    none CALL   0010  3  #4\n"
      "0012 >  tens SLOAD  5  1  #5\n"
      "0013    none CALL   0012  4  #5\n"
      "0014 >  flt  SLOAD  6  1  #6\n"
      "0015    bool LT     0014  0001\n"
      "0016 >  none GUARDF 0015  #7\n"
      "0017 >  none EXIT    #8\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0003 pc=4 frames=[] []\n"
      "SNAP #2 ir=0005 pc=5 frames=[] []\n"
      "SNAP #3 ir=0007 pc=6 frames=[] []\n"
      "SNAP #4 ir=0010 pc=7 frames=[] []\n"
      "SNAP #5 ir=0012 pc=8 frames=[] []\n"
      "SNAP #6 ir=0014 pc=9 frames=[] []\n"
      "SNAP #7 ir=0016 pc=10 frames=[] []\n"
      "SNAP #8 ir=0017 pc=11 frames=[] []\n"
      "CALL #0 newlist 0 newlist 0x0 dest=3\n"
      "CALL #1 builtin 0 tensor 0x0 dest=2\n"
      "CALL #2 arith 2 arith* 0x0 dest=4\n"
      "CALL #3 builtin 0 sum 0x0 dest=5\n"
      "CALL #4 builtin 0 item 0x0 dest=6\n";

TEST(TensorSink, FloatLiteralItsProductAndItsSumBecomeScalars) {
  TensorSinkPass sink(passtest::default_options().sink_max_elements);
  // The literal's elements are rounded to f32; `* 0.1` rounds 0.1 to f32
  // first (the kernels' f32 fast path) and each product after; the sum
  // adds from +0.0 in a double and rounds once; item is that value. The
  // three calls become VNEWTENSOR, named by the exits after them; the
  // list literal is left to the list sinking pass.
  EXPECT_IR_EQ(apply(sink, kFloatLiteral),
               "0000    flt  KFLOAT 0.10000000149011612\n"
               "0001    flt  KFLOAT 0.0\n"
               "0002 >  flt  SLOAD  0  0  #0\n"
               "0003 >  flt  SLOAD  1  0  #0\n"
               "0004    none CARG   0002  0003\n"
               "0005    none CALL   0004  0  #1\n"
               "0006 >  list SLOAD  3  1  #2\n"
               "0007    flt  F32RND 0002\n"
               "0008    flt  F32RND 0003\n"
               "0009    none CARG   0007  0008\n"
               "0010    tens VNEWTENSOR 0009  0\n"
               "0011    flt  FMUL   0007  0000\n"
               "0012    flt  F32RND 0011\n"
               "0013    flt  FMUL   0008  0000\n"
               "0014    flt  F32RND 0013\n"
               "0015    none CARG   0012  0014\n"
               "0016    tens VNEWTENSOR 0015  1\n"
               "0017    flt  FADD   0001  0012\n"
               "0018    flt  FADD   0017  0014\n"
               "0019    flt  F32RND 0018\n"
               "0020    tens VNEWTENSOR 0019  2\n"
               "0021    bool LT     0019  0002\n"
               "0022 >  none GUARDF 0021  #7\n"
               "0023 >  none EXIT    #8\n"
               "SNAP #0 ir=0002 pc=0 frames=[] []\n"
               "SNAP #1 ir=0004 pc=4 frames=[] []\n"
               "SNAP #2 ir=0006 pc=5 frames=[] []\n"
               "SNAP #3 ir=0016 pc=6 frames=[] [2=0010]\n"
               "SNAP #4 ir=0020 pc=7 frames=[] [2=0010 4=0016]\n"
               "SNAP #5 ir=0021 pc=8 frames=[] [2=0010 4=0016 5=0020]\n"
               "SNAP #6 ir=0021 pc=9 frames=[] [2=0010 4=0016 5=0020 6=0019]\n"
               "SNAP #7 ir=0022 pc=10 frames=[] [2=0010 4=0016 5=0020 6=0019]\n"
               "SNAP #8 ir=0023 pc=11 frames=[] [2=0010 4=0016 5=0020 6=0019]\n"
               "CALL #0 newlist 0 newlist 0x0 dest=3\n"
               "CALL #1 builtin 0 tensor 0x0 dest=2\n"
               "CALL #2 arith 2 arith* 0x0 dest=4\n"
               "CALL #3 builtin 0 sum 0x0 dest=5\n"
               "CALL #4 builtin 0 item 0x0 dest=6\n"
               "VTENSOR #0 f32 [2]\n"
               "VTENSOR #1 f32 [2]\n"
               "VTENSOR #2 f32 []\n");
}

// a, b ints: t = tensor([a, b]) (i64); u = t * 3; m = item(mean(u));
// d = item(sum(u / 3)).
TEST(TensorSink, IntTensorsWrapAndDivisionAndMeanGiveF32) {
  TensorSinkPass sink(passtest::default_options().sink_max_elements);
  // i64 products are wrapping MULs; the mean of an i64 tensor converts each
  // element and divides in a double, rounded to f32; `/ 3` of an i64 tensor
  // is f32 computed on doubles (the scalar is not rounded to f32 first).
  EXPECT_IR_EQ(apply(sink,
               "0000    int  KINT   3\n"
               "0001 >  int  SLOAD  0  0  #0\n"
               "0002 >  int  SLOAD  1  0  #0\n"
               "0003    none CARG   0001  0002\n"
               "0004    none CALL   0003  0  #1\n"
               "0005 >  list SLOAD  3  1  #2\n"
               "0006    none CALL   0005  1  #2\n"
               "0007 >  tens SLOAD  2  1  #3\n"
               "0008    none CARG   0007  0000\n"
               "0009    none CALL   0008  2  #3\n"
               "0010 >  tens SLOAD  4  1  #4\n"
               "0011    none CALL   0010  3  #4\n"
               "0012 >  tens SLOAD  5  1  #5\n"
               "0013    none CALL   0012  4  #5\n"
               "0014 >  flt  SLOAD  6  1  #6\n"
               "0015    none CARG   0010  0000\n"
               "0016    none CALL   0015  5  #6\n"
               "0017 >  tens SLOAD  7  1  #7\n"
               "0018    none CALL   0017  6  #7\n"
               "0019 >  tens SLOAD  8  1  #8\n"
               "0020    none CALL   0019  7  #8\n"
               "0021 >  flt  SLOAD  9  1  #9\n"
               "0022 >  none EXIT    #10\n"
               "SNAP #0 ir=0001 pc=0 frames=[] []\n"
               "SNAP #1 ir=0003 pc=4 frames=[] []\n"
               "SNAP #2 ir=0005 pc=5 frames=[] []\n"
               "SNAP #3 ir=0007 pc=6 frames=[] []\n"
               "SNAP #4 ir=0010 pc=7 frames=[] []\n"
               "SNAP #5 ir=0012 pc=8 frames=[] []\n"
               "SNAP #6 ir=0014 pc=9 frames=[] []\n"
               "SNAP #7 ir=0017 pc=10 frames=[] []\n"
               "SNAP #8 ir=0019 pc=11 frames=[] []\n"
               "SNAP #9 ir=0021 pc=12 frames=[] []\n"
               "SNAP #10 ir=0022 pc=13 frames=[] [10=0014 11=0021]\n"
               "CALL #0 newlist 0 newlist 0x0 dest=3\n"
               "CALL #1 builtin 0 tensor 0x0 dest=2\n"
               "CALL #2 arith 2 arith* 0x0 dest=4\n"
               "CALL #3 builtin 0 mean 0x0 dest=5\n"
               "CALL #4 builtin 0 item 0x0 dest=6\n"
               "CALL #5 arith 3 arith/ 0x0 dest=7\n"
               "CALL #6 builtin 0 sum 0x0 dest=8\n"
               "CALL #7 builtin 0 item 0x0 dest=9\n"),
               "0000    int  KINT   3\n"
               "0001    flt  KFLOAT 0.0\n"
               "0002    flt  KFLOAT 2.0\n"
               "0003    flt  KFLOAT 3.0 int\n"
               "0004 >  int  SLOAD  0  0  #0\n"
               "0005 >  int  SLOAD  1  0  #0\n"
               "0006    none CARG   0004  0005\n"
               "0007    none CALL   0006  0  #1\n"
               "0008 >  list SLOAD  3  1  #2\n"
               "0009    none CARG   0004  0005\n"
               "0010    tens VNEWTENSOR 0009  0\n"
               "0011    int  MUL    0004  0000\n"
               "0012    int  MUL    0005  0000\n"
               "0013    none CARG   0011  0012\n"
               "0014    tens VNEWTENSOR 0013  1\n"
               "0015    flt  CONV   0011\n"
               "0016    flt  FADD   0001  0015\n"
               "0017    flt  CONV   0012\n"
               "0018    flt  FADD   0016  0017\n"
               "0019    flt  FDIV   0018  0002\n"
               "0020    flt  F32RND 0019\n"
               "0021    tens VNEWTENSOR 0020  2\n"
               "0022    flt  CONV   0011\n"
               "0023    flt  FDIV   0022  0003\n"
               "0024    flt  F32RND 0023\n"
               "0025    flt  CONV   0012\n"
               "0026    flt  FDIV   0025  0003\n"
               "0027    flt  F32RND 0026\n"
               "0028    none CARG   0024  0027\n"
               "0029    tens VNEWTENSOR 0028  3\n"
               "0030    flt  FADD   0001  0024\n"
               "0031    flt  FADD   0030  0027\n"
               "0032    flt  F32RND 0031\n"
               "0033    tens VNEWTENSOR 0032  4\n"
               "0034 >  none EXIT    #10\n"
               "SNAP #0 ir=0004 pc=0 frames=[] []\n"
               "SNAP #1 ir=0006 pc=4 frames=[] []\n"
               "SNAP #2 ir=0008 pc=5 frames=[] []\n"
               "SNAP #3 ir=0014 pc=6 frames=[] [2=0010]\n"
               "SNAP #4 ir=0021 pc=7 frames=[] [2=0010 4=0014]\n"
               "SNAP #5 ir=0029 pc=8 frames=[] [2=0010 4=0014 5=0021]\n"
               "SNAP #6 ir=0029 pc=9 frames=[] [2=0010 4=0014 5=0021 6=0020]\n"
               "SNAP #7 ir=0033 pc=10 frames=[] [2=0010 4=0014 5=0021 6=0020 7=0029]\n"
               "SNAP #8 ir=0034 pc=11 frames=[] [2=0010 4=0014 5=0021 6=0020 7=0029 8=0033]\n"
               "SNAP #9 ir=0034 pc=12 frames=[] [2=0010 4=0014 5=0021 6=0020 7=0029 8=0033 9=0032]\n"
               "SNAP #10 ir=0034 pc=13 frames=[] [2=0010 4=0014 5=0021 6=0020 7=0029 8=0033 9=0032 10=0020 11=0032]\n"
               "CALL #0 newlist 0 newlist 0x0 dest=3\n"
               "CALL #1 builtin 0 tensor 0x0 dest=2\n"
               "CALL #2 arith 2 arith* 0x0 dest=4\n"
               "CALL #3 builtin 0 mean 0x0 dest=5\n"
               "CALL #4 builtin 0 item 0x0 dest=6\n"
               "CALL #5 arith 3 arith%2F 0x0 dest=7\n"
               "CALL #6 builtin 0 sum 0x0 dest=8\n"
               "CALL #7 builtin 0 item 0x0 dest=9\n"
               "VTENSOR #0 i64 [2]\n"
               "VTENSOR #1 i64 [2]\n"
               "VTENSOR #2 f32 []\n"
               "VTENSOR #3 f32 [2]\n"
               "VTENSOR #4 f32 []\n");
}

// w = full([2, 1], x) - tensor([y, y]) broadcasts to [2, 2]; then w[1, 0]
// as the recorder loads an element: dtype guard, a bounds check per index,
// the flat index, TLOAD.
TEST(TensorSink, BroadcastAndAnElementLoadAtConstantIndices) {
  TensorSinkPass sink(passtest::default_options().sink_max_elements);
  // out[i, j] = a[i, 0] - b[j]; the guards compare constants now (cse drops
  // them) and the load is element 1 * 2 + 0 of the result.
  EXPECT_IR_EQ(apply(sink,
               "0000    int  KINT   2\n"
               "0001    int  KINT   1\n"
               "0002    int  KINT   0\n"
               "0003 >  flt  SLOAD  0  0  #0\n"
               "0004 >  flt  SLOAD  1  0  #0\n"
               "0005    none CARG   0000  0001\n"
               "0006    none CALL   0005  0  #1\n"
               "0007 >  list SLOAD  5  1  #2\n"
               "0008    none CARG   0007  0003\n"
               "0009    none CALL   0008  1  #2\n"
               "0010 >  tens SLOAD  2  1  #3\n"
               "0011    none CARG   0004  0004\n"
               "0012    none CALL   0011  2  #3\n"
               "0013 >  list SLOAD  6  1  #4\n"
               "0014    none CALL   0013  3  #4\n"
               "0015 >  tens SLOAD  3  1  #5\n"
               "0016    none CARG   0010  0015\n"
               "0017    none CALL   0016  4  #5\n"
               "0018 >  tens SLOAD  4  1  #6\n"
               "0019    int  TDTYPE 0018\n"
               "0020    bool EQ     0019  0002\n"
               "0021 >  none GUARDT 0020  #7\n"
               "0022    int  TDIM   0018  0\n"
               "0023    bool ULT    0001  0022\n"
               "0024 >  none GUARDT 0023  #7\n"
               "0025    int  TDIM   0018  1\n"
               "0026    bool ULT    0002  0025\n"
               "0027 >  none GUARDT 0026  #7\n"
               "0028    int  MUL    0001  0025\n"
               "0029    int  ADD    0028  0002\n"
               "0030    int  TIDX   0029  0\n"
               "0031    flt  TLOAD  0018  0030\n"
               "0032 >  none EXIT    #8\n"
               "SNAP #0 ir=0003 pc=0 frames=[] []\n"
               "SNAP #1 ir=0005 pc=1 frames=[] []\n"
               "SNAP #2 ir=0007 pc=2 frames=[] []\n"
               "SNAP #3 ir=0010 pc=3 frames=[] []\n"
               "SNAP #4 ir=0013 pc=4 frames=[] []\n"
               "SNAP #5 ir=0015 pc=5 frames=[] []\n"
               "SNAP #6 ir=0018 pc=6 frames=[] []\n"
               "SNAP #7 ir=0019 pc=7 frames=[] []\n"
               "SNAP #8 ir=0032 pc=8 frames=[] [7=0031]\n"
               "CALL #0 newlist 0 newlist 0x0 dest=5\n"
               "CALL #1 builtin 0 full 0x0 dest=2\n"
               "CALL #2 newlist 0 newlist 0x0 dest=6\n"
               "CALL #3 builtin 0 tensor 0x0 dest=3\n"
               "CALL #4 arith 1 arith- 0x0 dest=4\n"),
               "0000    int  KINT   2\n"
               "0001    int  KINT   1\n"
               "0002    bool KBOOL  true\n"
               "0003 >  flt  SLOAD  0  0  #0\n"
               "0004 >  flt  SLOAD  1  0  #0\n"
               "0005    none CARG   0000  0001\n"
               "0006    none CALL   0005  0  #1\n"
               "0007 >  list SLOAD  5  1  #2\n"
               "0008    flt  F32RND 0003\n"
               "0009    none CARG   0008  0008\n"
               "0010    tens VNEWTENSOR 0009  0\n"
               "0011    none CARG   0004  0004\n"
               "0012    none CALL   0011  2  #3\n"
               "0013 >  list SLOAD  6  1  #4\n"
               "0014    flt  F32RND 0004\n"
               "0015    flt  F32RND 0004\n"
               "0016    none CARG   0014  0015\n"
               "0017    tens VNEWTENSOR 0016  1\n"
               "0018    flt  FSUB   0008  0014\n"
               "0019    flt  F32RND 0018\n"
               "0020    flt  FSUB   0008  0015\n"
               "0021    flt  F32RND 0020\n"
               "0022    flt  FSUB   0008  0014\n"
               "0023    flt  F32RND 0022\n"
               "0024    flt  FSUB   0008  0015\n"
               "0025    flt  F32RND 0024\n"
               "0026    none CARG   0019  0021\n"
               "0027    none CARG   0026  0023\n"
               "0028    none CARG   0027  0025\n"
               "0029    tens VNEWTENSOR 0028  2\n"
               "0030 >  none GUARDT 0002  #7\n"
               "0031 >  none GUARDT 0002  #7\n"
               "0032 >  none GUARDT 0002  #7\n"
               "0033    int  TIDX   0000  0\n"
               "0034 >  none EXIT    #8\n"
               "SNAP #0 ir=0003 pc=0 frames=[] []\n"
               "SNAP #1 ir=0005 pc=1 frames=[] []\n"
               "SNAP #2 ir=0007 pc=2 frames=[] []\n"
               "SNAP #3 ir=0011 pc=3 frames=[] [2=0010]\n"
               "SNAP #4 ir=0013 pc=4 frames=[] [2=0010]\n"
               "SNAP #5 ir=0029 pc=5 frames=[] [2=0010 3=0017]\n"
               "SNAP #6 ir=0030 pc=6 frames=[] [2=0010 3=0017 4=0029]\n"
               "SNAP #7 ir=0030 pc=7 frames=[] [2=0010 3=0017 4=0029]\n"
               "SNAP #8 ir=0034 pc=8 frames=[] [2=0010 3=0017 4=0029 7=0023]\n"
               "CALL #0 newlist 0 newlist 0x0 dest=5\n"
               "CALL #1 builtin 0 full 0x0 dest=2\n"
               "CALL #2 newlist 0 newlist 0x0 dest=6\n"
               "CALL #3 builtin 0 tensor 0x0 dest=3\n"
               "CALL #4 arith 1 arith- 0x0 dest=4\n"
               "VTENSOR #0 f32 [2, 1]\n"
               "VTENSOR #1 f32 [2]\n"
               "VTENSOR #2 f32 [2, 2]\n");
}

// A second name: `let a = t` stores the tensor into register 7 too. Both
// registers name the one VNEWTENSOR, so the exit builds one object.
TEST(TensorSink, SecondNameIsNamedByTheSameExits) {
  TensorSinkPass sink(passtest::default_options().sink_max_elements);
  EXPECT_IR_EQ(apply(sink,
               "0000 >  flt  SLOAD  0  0  #0\n"
               "0001    none CARG   0000  0000\n"
               "0002    none CALL   0001  0  #1\n"
               "0003 >  list SLOAD  3  1  #2\n"
               "0004    none CALL   0003  1  #2\n"
               "0005 >  tens SLOAD  2  1  #3\n"
               "0006    none SSTORE 7  0005\n"
               "0007 >  none EXIT    #4\n"
               "SNAP #0 ir=0000 pc=0 frames=[] []\n"
               "SNAP #1 ir=0001 pc=1 frames=[] []\n"
               "SNAP #2 ir=0003 pc=2 frames=[] []\n"
               "SNAP #3 ir=0005 pc=3 frames=[] []\n"
               "SNAP #4 ir=0007 pc=4 frames=[] []\n"
               "CALL #0 newlist 0 newlist 0x0 dest=3\n"
               "CALL #1 builtin 0 tensor 0x0 dest=2\n"),
               "0000 >  flt  SLOAD  0  0  #0\n"
               "0001    none CARG   0000  0000\n"
               "0002    none CALL   0001  0  #1\n"
               "0003 >  list SLOAD  3  1  #2\n"
               "0004    flt  F32RND 0000\n"
               "0005    flt  F32RND 0000\n"
               "0006    none CARG   0004  0005\n"
               "0007    tens VNEWTENSOR 0006  0\n"
               "0008 >  none EXIT    #4\n"
               "SNAP #0 ir=0000 pc=0 frames=[] []\n"
               "SNAP #1 ir=0001 pc=1 frames=[] []\n"
               "SNAP #2 ir=0003 pc=2 frames=[] []\n"
               "SNAP #3 ir=0008 pc=3 frames=[] [2=0007]\n"
               "SNAP #4 ir=0008 pc=4 frames=[] [2=0007 7=0007]\n"
               "CALL #0 newlist 0 newlist 0x0 dest=3\n"
               "CALL #1 builtin 0 tensor 0x0 dest=2\n"
               "VTENSOR #0 f32 [2]\n");
}

// t is a tensor the trace did not make (a parameter); the call t * 2.0 saw
// it as f32 [2] while recording (seen=): guards on its dtype, rank and
// dimension before the call, exiting through the call's snapshot, make the
// layout true, and the product, its sum and item are scalars over loads of
// t's elements.
TEST(TensorSink, LayoutsTheRecorderSawAreGuardedAndUsed) {
  TensorSinkPass sink(passtest::default_options().sink_max_elements);
  const char* in =
      "0000    flt  KFLOAT 2.0\n"
      "0001 >  tens SLOAD  0  0  #0\n"
      "0002    none CARG   0001  0000\n"
      "0003    none CALL   0002  0  #1\n"
      "0004 >  tens SLOAD  2  1  #2\n"
      "0005    none CALL   0004  1  #2\n"
      "0006 >  tens SLOAD  3  1  #3\n"
      "0007    none CALL   0006  2  #3\n"
      "0008 >  flt  SLOAD  4  1  #4\n"
      "0009 >  none EXIT    #5\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=1 frames=[] []\n"
      "SNAP #2 ir=0004 pc=2 frames=[] []\n"
      "SNAP #3 ir=0006 pc=3 frames=[] []\n"
      "SNAP #4 ir=0008 pc=4 frames=[] []\n"
      "SNAP #5 ir=0009 pc=5 frames=[] [5=0008]\n"
      "CALL #0 arith 2 arith* 0x0 dest=2 seen=0:f32:2\n"
      "CALL #1 builtin 0 sum 0x0 dest=3\n"
      "CALL #2 builtin 0 item 0x0 dest=4\n";
  EXPECT_IR_EQ(apply(sink, in),
               "0000    flt  KFLOAT 2.0\n"
               "0001    int  KINT   0\n"
               "0002    int  KINT   1\n"
               "0003    int  KINT   2\n"
               "0004    flt  KFLOAT 0.0\n"
               "0005 >  tens SLOAD  0  0  #0\n"
               "0006    int  TDTYPE 0005\n"
               "0007    bool EQ     0006  0001\n"
               "0008 >  none GUARDT 0007  #1\n"
               "0009    int  TRANK  0005\n"
               "0010    bool EQ     0009  0002\n"
               "0011 >  none GUARDT 0010  #1\n"
               "0012    int  TDIM   0005  0\n"
               "0013    bool EQ     0012  0003\n"
               "0014 >  none GUARDT 0013  #1\n"
               "0015    int  TIDX   0001  0\n"
               "0016    flt  TLOAD  0005  0015\n"
               "0017    flt  FMUL   0016  0000\n"
               "0018    flt  F32RND 0017\n"
               "0019    int  TIDX   0002  0\n"
               "0020    flt  TLOAD  0005  0019\n"
               "0021    flt  FMUL   0020  0000\n"
               "0022    flt  F32RND 0021\n"
               "0023    none CARG   0018  0022\n"
               "0024    tens VNEWTENSOR 0023  0\n"
               "0025    flt  FADD   0004  0018\n"
               "0026    flt  FADD   0025  0022\n"
               "0027    flt  F32RND 0026\n"
               "0028    tens VNEWTENSOR 0027  1\n"
               "0029 >  none EXIT    #5\n"
               "SNAP #0 ir=0005 pc=0 frames=[] []\n"
               "SNAP #1 ir=0008 pc=1 frames=[] []\n"
               "SNAP #2 ir=0028 pc=2 frames=[] [2=0024]\n"
               "SNAP #3 ir=0029 pc=3 frames=[] [2=0024 3=0028]\n"
               "SNAP #4 ir=0029 pc=4 frames=[] [2=0024 3=0028 4=0027]\n"
               "SNAP #5 ir=0029 pc=5 frames=[] [2=0024 3=0028 4=0027 5=0027]\n"
               "CALL #0 arith 2 arith* 0x0 dest=2 seen=0:f32:2\n"
               "CALL #1 builtin 0 sum 0x0 dest=3\n"
               "CALL #2 builtin 0 item 0x0 dest=4\n"
               "VTENSOR #0 f32 [2]\n"
               "VTENSOR #1 f32 []\n");
  // Without the recorder's observation nothing is known about t.
  std::string unseen = in;
  unseen.erase(unseen.find(" seen=0:f32:2"), 13);
  EXPECT_IR_EQ(passtest::apply(sink, unseen), print_ir(parse_ir(unseen)));
}

// --- where it must not apply

TEST(TensorSink, TensorPassedToAnotherHelperStaysAllocated) {
  TensorSinkPass sink(passtest::default_options().sink_max_elements);
  const char* in =
      "0000 >  flt  SLOAD  0  0  #0\n"
      "0001    none CARG   0000  0000\n"
      "0002    none CALL   0001  0  #1\n"
      "0003 >  list SLOAD  3  1  #2\n"
      "0004    none CALL   0003  1  #2\n"
      "0005 >  tens SLOAD  2  1  #3\n"
      "0006    none CALL   0005  2  #3\n"
      "0007 >  none EXIT    #4\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0001 pc=1 frames=[] []\n"
      "SNAP #2 ir=0003 pc=2 frames=[] []\n"
      "SNAP #3 ir=0005 pc=3 frames=[] []\n"
      "SNAP #4 ir=0007 pc=4 frames=[] []\n"
      "CALL #0 newlist 0 newlist 0x0 dest=3\n"
      "CALL #1 builtin 0 tensor 0x0 dest=2\n"
      "CALL #2 builtin 0 print 0x0\n";
  EXPECT_IR_EQ(apply(sink, in), print_ir(parse_ir(in)));
}

// The tensor escapes (print), but its layout is still known: item(t) of
// the one-element tensor becomes an element load instead of a call.
TEST(TensorSink, QueryOfAnEscapingTensorBecomesALoad) {
  TensorSinkPass sink(passtest::default_options().sink_max_elements);
  EXPECT_IR_EQ(apply(sink,
               "0000 >  flt  SLOAD  0  0  #0\n"
               "0001    none CALL   0000  0  #1\n"
               "0002 >  list SLOAD  3  1  #2\n"
               "0003    none CALL   0002  1  #2\n"
               "0004 >  tens SLOAD  2  1  #3\n"
               "0005    none CALL   0004  2  #3\n"
               "0006    none CALL   0004  3  #4\n"
               "0007 >  flt  SLOAD  4  1  #5\n"
               "0008 >  none EXIT    #6\n"
               "SNAP #0 ir=0000 pc=0 frames=[] []\n"
               "SNAP #1 ir=0001 pc=1 frames=[] []\n"
               "SNAP #2 ir=0002 pc=2 frames=[] []\n"
               "SNAP #3 ir=0004 pc=3 frames=[] []\n"
               "SNAP #4 ir=0006 pc=4 frames=[] []\n"
               "SNAP #5 ir=0007 pc=5 frames=[] []\n"
               "SNAP #6 ir=0008 pc=6 frames=[] [5=0007]\n"
               "CALL #0 newlist 0 newlist 0x0 dest=3\n"
               "CALL #1 builtin 0 tensor 0x0 dest=2\n"
               "CALL #2 builtin 0 print 0x0\n"
               "CALL #3 builtin 0 item 0x0 dest=4\n"),
               "0000    int  KINT   0\n"
               "0001 >  flt  SLOAD  0  0  #0\n"
               "0002    none CALL   0001  0  #1\n"
               "0003 >  list SLOAD  3  1  #2\n"
               "0004    none CALL   0003  1  #2\n"
               "0005 >  tens SLOAD  2  1  #3\n"
               "0006    none CALL   0005  2  #3\n"
               "0007    int  TIDX   0000  0\n"
               "0008    flt  TLOAD  0005  0007\n"
               "0009 >  none EXIT    #6\n"
               "SNAP #0 ir=0001 pc=0 frames=[] []\n"
               "SNAP #1 ir=0002 pc=1 frames=[] []\n"
               "SNAP #2 ir=0003 pc=2 frames=[] []\n"
               "SNAP #3 ir=0005 pc=3 frames=[] []\n"
               "SNAP #4 ir=0009 pc=4 frames=[] []\n"
               "SNAP #5 ir=0009 pc=5 frames=[] [4=0008]\n"
               "SNAP #6 ir=0009 pc=6 frames=[] [4=0008 5=0008]\n"
               "CALL #0 newlist 0 newlist 0x0 dest=3\n"
               "CALL #1 builtin 0 tensor 0x0 dest=2\n"
               "CALL #2 builtin 0 print 0x0\n"
               "CALL #3 builtin 0 item 0x0 dest=4\n");
}

TEST(TensorSink, ElementStoreKeepsTheAllocation) {
  TensorSinkPass sink(passtest::default_options().sink_max_elements);
  const char* in =
      "0000    int  KINT   0\n"
      "0001 >  flt  SLOAD  0  0  #0\n"
      "0002    none CARG   0001  0001\n"
      "0003    none CALL   0002  0  #1\n"
      "0004 >  list SLOAD  3  1  #2\n"
      "0005    none CALL   0004  1  #2\n"
      "0006 >  tens SLOAD  2  1  #3\n"
      "0007    int  TIDX   0000  0\n"
      "0008    none TREF   0006  0007\n"
      "0009    none TSTORE 0008  0001\n"
      "0010 >  none EXIT    #4\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=1 frames=[] []\n"
      "SNAP #2 ir=0004 pc=2 frames=[] []\n"
      "SNAP #3 ir=0006 pc=3 frames=[] []\n"
      "SNAP #4 ir=0010 pc=4 frames=[] []\n"
      "CALL #0 newlist 0 newlist 0x0 dest=3\n"
      "CALL #1 builtin 0 tensor 0x0 dest=2\n";
  EXPECT_IR_EQ(apply(sink, in), print_ir(parse_ir(in)));
}

// t[i] at a variable index needs the tensor in memory; its dtype and
// dimension are still constants (the dtype guard compares constants).
TEST(TensorSink, LoadAtAVariableIndexKeepsTheAllocation) {
  TensorSinkPass sink(passtest::default_options().sink_max_elements);
  EXPECT_IR_EQ(apply(sink,
               "0000    int  KINT   0\n"
               "0001 >  flt  SLOAD  0  0  #0\n"
               "0002 >  int  SLOAD  1  0  #0\n"
               "0003    none CARG   0001  0001\n"
               "0004    none CALL   0003  0  #1\n"
               "0005 >  list SLOAD  3  1  #2\n"
               "0006    none CALL   0005  1  #2\n"
               "0007 >  tens SLOAD  2  1  #3\n"
               "0008    int  TDTYPE 0007\n"
               "0009    bool EQ     0008  0000\n"
               "0010 >  none GUARDT 0009  #4\n"
               "0011    int  TDIM   0007  0\n"
               "0012    bool ULT    0002  0011\n"
               "0013 >  none GUARDT 0012  #4\n"
               "0014    int  TIDX   0002  0\n"
               "0015    flt  TLOAD  0007  0014\n"
               "0016 >  none EXIT    #5\n"
               "SNAP #0 ir=0001 pc=0 frames=[] []\n"
               "SNAP #1 ir=0003 pc=2 frames=[] []\n"
               "SNAP #2 ir=0005 pc=3 frames=[] []\n"
               "SNAP #3 ir=0007 pc=4 frames=[] []\n"
               "SNAP #4 ir=0008 pc=5 frames=[] []\n"
               "SNAP #5 ir=0016 pc=6 frames=[] [4=0015]\n"
               "CALL #0 newlist 0 newlist 0x0 dest=3\n"
               "CALL #1 builtin 0 tensor 0x0 dest=2\n"),
               "0000    int  KINT   2\n"
               "0001    bool KBOOL  true\n"
               "0002 >  flt  SLOAD  0  0  #0\n"
               "0003 >  int  SLOAD  1  0  #0\n"
               "0004    none CARG   0002  0002\n"
               "0005    none CALL   0004  0  #1\n"
               "0006 >  list SLOAD  3  1  #2\n"
               "0007    none CALL   0006  1  #2\n"
               "0008 >  tens SLOAD  2  1  #3\n"
               "0009 >  none GUARDT 0001  #4\n"
               "0010    bool ULT    0003  0000\n"
               "0011 >  none GUARDT 0010  #4\n"
               "0012    int  TIDX   0003  0\n"
               "0013    flt  TLOAD  0008  0012\n"
               "0014 >  none EXIT    #5\n"
               "SNAP #0 ir=0002 pc=0 frames=[] []\n"
               "SNAP #1 ir=0004 pc=2 frames=[] []\n"
               "SNAP #2 ir=0006 pc=3 frames=[] []\n"
               "SNAP #3 ir=0008 pc=4 frames=[] []\n"
               "SNAP #4 ir=0009 pc=5 frames=[] []\n"
               "SNAP #5 ir=0014 pc=6 frames=[] [4=0013]\n"
               "CALL #0 newlist 0 newlist 0x0 dest=3\n"
               "CALL #1 builtin 0 tensor 0x0 dest=2\n");
}

// The list literal may change between its construction and tensor(): a
// helper call (push, say) runs in between. Its length is not known.
TEST(TensorSink, ListThatMayChangeBeforeTensorGivesNoLayout) {
  TensorSinkPass sink(passtest::default_options().sink_max_elements);
  const char* in =
      "0000 >  flt  SLOAD  0  0  #0\n"
      "0001    none CARG   0000  0000\n"
      "0002    none CALL   0001  0  #1\n"
      "0003 >  list SLOAD  3  1  #2\n"
      "0004    none CARG   0003  0000\n"
      "0005    none CALL   0004  1  #3\n"
      "0006    none CALL   0003  2  #4\n"
      "0007 >  tens SLOAD  2  1  #5\n"
      "0008    none CALL   0007  3  #6\n"
      "0009 >  int  SLOAD  4  1  #7\n"
      "0010 >  none EXIT    #8\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0001 pc=1 frames=[] []\n"
      "SNAP #2 ir=0003 pc=2 frames=[] []\n"
      "SNAP #3 ir=0004 pc=3 frames=[] []\n"
      "SNAP #4 ir=0006 pc=4 frames=[] []\n"
      "SNAP #5 ir=0007 pc=5 frames=[] []\n"
      "SNAP #6 ir=0008 pc=6 frames=[] []\n"
      "SNAP #7 ir=0009 pc=7 frames=[] []\n"
      "SNAP #8 ir=0010 pc=8 frames=[] [5=0009]\n"
      "CALL #0 newlist 0 newlist 0x0 dest=3\n"
      "CALL #1 builtin 0 push 0x0\n"
      "CALL #2 builtin 0 tensor 0x0 dest=2\n"
      "CALL #3 builtin 0 numel 0x0 dest=4\n";
  EXPECT_IR_EQ(apply(sink, in), print_ir(parse_ir(in)));
}

TEST(TensorSink, TensorLargerThanTheLimitStaysAllocated) {
  TensorSinkPass sink(1);
  EXPECT_IR_EQ(apply(sink, kFloatLiteral), print_ir(parse_ir(kFloatLiteral)));
}

// In a loop body, an exit before the call may need the register as the
// previous iteration left it (and the loop header may, where the tier-up
// exit resumes): without liveness (no function) every register counts as
// live there, so neither the tensor nor numel's result leaves the trace.
TEST(TensorSink, RegisterAnEarlierExitMayReadKeepsItsWrite) {
  TensorSinkPass sink(passtest::default_options().sink_max_elements);
  const char* in =
      "0000 >  flt  SLOAD  0  0  #0\n"
      "0001    none LOOP\n"
      "0002    bool LT     0000  0000\n"
      "0003 >  none GUARDF 0002  #1\n"
      "0004    none CARG   0000  0000\n"
      "0005    none CALL   0004  0  #2\n"
      "0006 >  list SLOAD  3  1  #3\n"
      "0007    none CALL   0006  1  #3\n"
      "0008 >  tens SLOAD  2  1  #4\n"
      "0009    none CALL   0008  2  #4\n"
      "0010 >  int  SLOAD  4  1  #5\n"
      "0011 >  none EXIT    #6\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0003 pc=1 frames=[] []\n"
      "SNAP #2 ir=0004 pc=2 frames=[] []\n"
      "SNAP #3 ir=0006 pc=3 frames=[] []\n"
      "SNAP #4 ir=0008 pc=4 frames=[] []\n"
      "SNAP #5 ir=0010 pc=5 frames=[] []\n"
      "SNAP #6 ir=0011 pc=6 frames=[] [5=0010]\n"
      "CALL #0 newlist 0 newlist 0x0 dest=3\n"
      "CALL #1 builtin 0 tensor 0x0 dest=2\n"
      "CALL #2 builtin 0 numel 0x0 dest=4\n";
  EXPECT_IR_EQ(apply(sink, in), print_ir(parse_ir(in)));
}

// tensor_sink_ops.def names the Graph IR ops' built-ins by OpId, and only
// the built-ins that are not Graph IR ops by name.
TEST(TensorSink, OpRowsNameGraphIrBuiltinsAndNameRowsTheOthers) {
#define TSINK_OP(op, ...) EXPECT_TRUE(op_def(OpId::op).builtin) << #op;
#define TSINK_BUILTIN(name, ...) EXPECT_EQ(find_op(name), nullptr) << name;
#define TSINK_ARITH(...)
#define TSINK_NEGATE(...)
#include "optimizer/tensor_sink_ops.def"
#undef TSINK_OP
#undef TSINK_BUILTIN
#undef TSINK_ARITH
#undef TSINK_NEGATE
}

}  // namespace
}  // namespace tessera::jit
