// FusionPass, IR in / IR out (optimizer/fusion.h): the trace of
//   x = tanh(y * 1.5 + x) * 0.5      (x, y: f32 [32] globals)
// as it reaches the pass, and as the pass leaves it: the four calls are one
// kernel call on y, 1.5, x and 0.5; the global loads move before it. Then
// where fusion must not apply: an element store between two operations, an
// intermediate that an exit reads, an operation whose error must come at
// its own line. Liveness comes from the script's bytecode, as in the JIT.
// The other kinds of kernel are in fusion_kinds_test.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/optimizer/fusion_test_support.h"

namespace tessera::jit {
namespace {

const char* kSource =
    "let x = arange(32) * 0.5\n"
    "let y = arange(32) * 0.25\n"
    "for i in range(100) {\n"
    "  x = tanh(y * 1.5 + x) * 0.5\n"
    "}\n"
    "print(item(sum(x)))\n";

// The recorded trace after the passes before fusion (tessera-vm run --dump).
const char* kTrace =
    "0000    bltn KOBJ   0x55afba505120\n"
    "0001    flt  KFLOAT 1.5\n"
    "0002    flt  KFLOAT 0.5\n"
    "0003    int  KINT   0\n"
    "0004    int  KINT   1\n"
    "0005 >  int  SLOAD  1  0  #0\n"
    "0006 >  int  SLOAD  2  0  #0\n"
    "0007 >  int  SLOAD  0  0  #0\n"
    "0008    none LOOP\n"
    "0009 >  tens GLOAD  1  #1\n"
    "0010    none CARG   0009  0001\n"
    "0011    none CALL   0010  0  #2\n"
    "0012 >  tens SLOAD  7  1  #3\n"
    "0013 >  tens GLOAD  0  #3\n"
    "0014    none CARG   0012  0013\n"
    "0015    none CALL   0014  1  #4\n"
    "0016 >  tens SLOAD  6  1  #5\n"
    "0017    none CALL   0016  2  #5\n"
    "0018 >  tens SLOAD  5  1  #6\n"
    "0019    none CARG   0018  0002\n"
    "0020    none CALL   0019  3  #6\n"
    "0021 >  tens SLOAD  4  1  #7\n"
    "0022    none SSTORE 8  0013\n"
    "0023    none GSTORE 0  0021\n"
    "0024    bool GT     0005  0003\n"
    "0025 >  none GUARDT 0024  #8\n"
    "0026    int  ADD    0007  0006\n"
    "0027    int  SUB    0005  0004\n"
    "0028    none SSTORE 3  0026\n"
    "0029    int  PHI    0007  0026\n"
    "0030    int  PHI    0005  0027\n"
    "SNAP #0 ir=0005 pc=14 frames=[] []\n"
    "SNAP #1 ir=0009 pc=15 frames=[] [0=0007 1=0005 5=0000]\n"
    "SNAP #2 ir=0010 pc=16 frames=[] [0=0007 1=0005 5=0000 8=0009]\n"
    "SNAP #3 ir=0012 pc=17 frames=[] [0=0007 1=0005 5=0000]\n"
    "SNAP #4 ir=0014 pc=18 frames=[] [0=0007 1=0005 5=0000 8=0013]\n"
    "SNAP #5 ir=0016 pc=19 frames=[] [0=0007 1=0005 5=0000]\n"
    "SNAP #6 ir=0018 pc=20 frames=[] [0=0007 1=0005]\n"
    "SNAP #7 ir=0021 pc=21 frames=[] [0=0007 1=0005]\n"
    "SNAP #8 ir=0025 pc=22 frames=[] [0=0007 1=0005]\n"
    "CALL #0 arith 2 arith* 0x0 dest=7 seen=0:f32:32\n"
    "CALL #1 arith 0 arith+ 0x0 dest=6 seen=0:f32:32,1:f32:32\n"
    "CALL #2 builtin 0 tanh 0x55afba505120 dest=5 seen=0:f32:32\n"
    "CALL #3 arith 2 arith* 0x0 dest=4 seen=0:f32:32\n"
    "ASSUME global=3 value=0x55afba505120\n";

// The pass on the chain's trace, liveness from kSource.
using jit::fuse;
std::string fuse(const std::string& text) { return fuse(text, kSource); }

TEST(Fusion, AnElementwiseChainBecomesOneKernelCall) {
  EXPECT_IR_EQ(fuse(kTrace),
    "0000    bltn KOBJ   0x55afba505120\n"
    "0001    flt  KFLOAT 1.5\n"
    "0002    flt  KFLOAT 0.5\n"
    "0003    int  KINT   0\n"
    "0004    int  KINT   1\n"
    "0005 >  int  SLOAD  1  0  #0\n"
    "0006 >  int  SLOAD  2  0  #0\n"
    "0007 >  int  SLOAD  0  0  #0\n"
    "0008    none LOOP\n"
    "0009 >  tens GLOAD  1  #1\n"
    "0010 >  tens GLOAD  0  #2\n"
    "0011    none CARG   0009  0001\n"
    "0012    none CARG   0011  0010\n"
    "0013    none CARG   0012  0002\n"
    "0014    int  TDTYPE 0009\n"
    "0015    bool EQ     0014  0003\n"
    "0016 >  none GUARDT 0015  #2\n"
    "0017    int  TRANK  0009\n"
    "0018    bool EQ     0017  0004\n"
    "0019 >  none GUARDT 0018  #2\n"
    "0020    int  TDIM   0009  0\n"
    "0021    bool NE     0020  0004\n"
    "0022 >  none GUARDT 0021  #2\n"
    "0023    int  TDTYPE 0010\n"
    "0024    bool EQ     0023  0003\n"
    "0025 >  none GUARDT 0024  #2\n"
    "0026    int  TRANK  0010\n"
    "0027    bool EQ     0026  0004\n"
    "0028 >  none GUARDT 0027  #2\n"
    "0029    int  TDIM   0010  0\n"
    "0030    bool EQ     0029  0020\n"
    "0031 >  none GUARDT 0030  #2\n"
    "0032    none CALL   0013  4  #2\n"
    "0033 >  tens SLOAD  4  1  #7\n"
    "0034    none SSTORE 8  0010\n"
    "0035    none GSTORE 0  0033\n"
    "0036    bool GT     0005  0003\n"
    "0037 >  none GUARDT 0036  #8\n"
    "0038    int  ADD    0007  0006\n"
    "0039    int  SUB    0005  0004\n"
    "0040    none SSTORE 3  0038\n"
    "0041    int  PHI    0007  0038\n"
    "0042    int  PHI    0005  0039\n"
    "SNAP #0 ir=0005 pc=14 frames=[] []\n"
    "SNAP #1 ir=0009 pc=15 frames=[] [0=0007 1=0005 5=0000]\n"
    "SNAP #2 ir=0010 pc=16 frames=[] [0=0007 1=0005 5=0000 8=0009]\n"
    "SNAP #3 ir=0010 pc=17 frames=[] [0=0007 1=0005 5=0000]\n"
    "SNAP #4 ir=0032 pc=18 frames=[] [0=0007 1=0005 5=0000 8=0010]\n"
    "SNAP #5 ir=0032 pc=19 frames=[] [0=0007 1=0005 5=0000]\n"
    "SNAP #6 ir=0032 pc=20 frames=[] [0=0007 1=0005]\n"
    "SNAP #7 ir=0033 pc=21 frames=[] [0=0007 1=0005]\n"
    "SNAP #8 ir=0037 pc=22 frames=[] [0=0007 1=0005]\n"
    "CALL #0 arith 2 arith* 0x0 dest=7 seen=0:f32:32\n"
    "CALL #1 arith 0 arith+ 0x0 dest=6 seen=0:f32:32,1:f32:32\n"
    "CALL #2 builtin 0 tanh 0x55afba505120 dest=5 seen=0:f32:32\n"
    "CALL #3 arith 2 arith* 0x0 dest=4 seen=0:f32:32\n"
    "CALL #4 kernel 0 kernel 0x0 dest=4\n"
    "  | %0 = input : f32[s0]\n"
    "  | %1 = input : float\n"
    "  | %2 = mul(%0, %1) : f32[s0]\n"
    "  | %3 = input : f32[s0]\n"
    "  | %4 = add(%2, %3) : f32[s0]\n"
    "  | %5 = tanh(%4) : f32[s0]\n"
    "  | %6 = input : float\n"
    "  | %7 = mul(%5, %6) : f32[s0]\n"
    "  | outputs %7\n"
    "ASSUME global=3 value=0x55afba505120\n");
}


// Without the script's function every register counts as live at every
// exit: no intermediate may go, nothing fuses.
TEST(Fusion, WithoutLivenessNothingFuses) {
  FusionPass pass;
  EXPECT_IR_EQ(passtest::apply(pass, kTrace), print_ir(parse_ir(kTrace)));
}

// u[3] = 2.0 between `y * 1.5 + x` and `tanh(u) * 0.5`: the element store
// ends the first run (u, its output, is allocated and stored into) and the
// second starts after it.
const char* kStoreSource =
    "let x = arange(32) * 0.5\n"
    "let y = arange(32) * 0.25\n"
    "for i in range(100) {\n"
    "  let u = y * 1.5 + x\n"
    "  u[3] = 2.0\n"
    "  x = tanh(u) * 0.5\n"
    "}\n"
    "print(item(sum(x)))\n";
TEST(Fusion, AnElementStoreEndsARun) {
  const std::string out = fuse(
    "0000    flt  KFLOAT 1.5\n"
    "0001    int  KINT   3\n"
    "0002    flt  KFLOAT 2.0\n"
    "0003    int  KINT   0\n"
    "0004    int  KINT   1\n"
    "0005    bltn KOBJ   0x56391ebd42c0\n"
    "0006    flt  KFLOAT 0.5\n"
    "0007 >  int  SLOAD  1  0  #0\n"
    "0008 >  int  SLOAD  2  0  #0\n"
    "0009 >  int  SLOAD  0  0  #0\n"
    "0010    int  TIDX   0001  0\n"
    "0011    none LOOP\n"
    "0012 >  tens GLOAD  1  #1\n"
    "0013    none CARG   0012  0000\n"
    "0014    none CALL   0013  0  #2\n"
    "0015 >  tens SLOAD  5  1  #3\n"
    "0016 >  tens GLOAD  0  #3\n"
    "0017    none CARG   0015  0016\n"
    "0018    none CALL   0017  1  #4\n"
    "0019 >  tens SLOAD  4  1  #5\n"
    "0020    int  TDTYPE 0019\n"
    "0021    bool EQ     0020  0003\n"
    "0022 >  none GUARDT 0021  #6\n"
    "0023    int  TRANK  0019\n"
    "0024    bool EQ     0023  0004\n"
    "0025 >  none GUARDT 0024  #6\n"
    "0026    int  TDIM   0019  0\n"
    "0027    bool ULT    0001  0026\n"
    "0028 >  none GUARDT 0027  #6\n"
    "0029    none TREF   0019  0010\n"
    "0030    none TSTORE 0029  0002\n"
    "0031    none SSTORE 7  0019\n"
    "0032    none CALL   0019  2  #7\n"
    "0033 >  tens SLOAD  6  1  #8\n"
    "0034    none CARG   0033  0006\n"
    "0035    none CALL   0034  3  #8\n"
    "0036 >  tens SLOAD  5  1  #9\n"
    "0037    none GSTORE 0  0036\n"
    "0038    bool GT     0007  0003\n"
    "0039 >  none GUARDT 0038  #10\n"
    "0040    int  ADD    0009  0008\n"
    "0041    int  SUB    0007  0004\n"
    "0042    none SSTORE 3  0040\n"
    "0043    int  PHI    0009  0040\n"
    "0044    int  PHI    0007  0041\n"
    "SNAP #0 ir=0007 pc=14 frames=[] []\n"
    "SNAP #1 ir=0012 pc=14 frames=[] [0=0009 1=0007]\n"
    "SNAP #2 ir=0013 pc=15 frames=[] [0=0009 1=0007 6=0012]\n"
    "SNAP #3 ir=0015 pc=16 frames=[] [0=0009 1=0007]\n"
    "SNAP #4 ir=0017 pc=17 frames=[] [0=0009 1=0007 6=0016]\n"
    "SNAP #5 ir=0019 pc=18 frames=[] [0=0009 1=0007]\n"
    "SNAP #6 ir=0022 pc=20 frames=[] [0=0009 1=0007 5=0001 6=0002]\n"
    "SNAP #7 ir=0032 pc=23 frames=[] [0=0009 1=0007 6=0005]\n"
    "SNAP #8 ir=0033 pc=24 frames=[] [0=0009 1=0007]\n"
    "SNAP #9 ir=0036 pc=25 frames=[] [0=0009 1=0007]\n"
    "SNAP #10 ir=0039 pc=26 frames=[] [0=0009 1=0007]\n"
    "CALL #0 arith 2 arith* 0x0 dest=5 seen=0:f32:32\n"
    "CALL #1 arith 0 arith+ 0x0 dest=4 seen=0:f32:32,1:f32:32\n"
    "CALL #2 builtin 0 tanh 0x56391ebd42c0 dest=6 seen=0:f32:32\n"
    "CALL #3 arith 2 arith* 0x0 dest=5 seen=0:f32:32\n"
    "ASSUME global=3 value=0x56391ebd42c0\n", kStoreSource);
  EXPECT_EQ(regions(out), (std::vector<std::string>{"%0 = input : f32[s0]; %1 = input : float; %2 = mul(%0, %1) : f32[s0]; %3 = input : f32[s0]; %4 = add(%2, %3) : f32[s0]; outputs %4", "%0 = input : f32[s0]; %1 = tanh(%0) : f32[s0]; %2 = input : float; %3 = mul(%1, %2) : f32[s0]; outputs %3"})) << out;
}

// u is read where the branch `i == 99` leaves the trace: it is the first
// run's output (allocated, in its register at that exit), not an
// intermediate of one run from y * 1.5 to tanh(u) * 0.5.
const char* kExitSource =
    "let x = arange(32) * 0.5\n"
    "let y = arange(32) * 0.25\n"
    "for i in range(100) {\n"
    "  let u = y * 1.5 + x\n"
    "  if i == 99 { print(item(sum(u))) }\n"
    "  x = tanh(u) * 0.5\n"
    "}\n"
    "print(item(sum(x)))\n";
TEST(Fusion, AnIntermediateThatAnExitReadsEndsARun) {
  const std::string out = fuse(
    "0000    flt  KFLOAT 1.5\n"
    "0001    int  KINT   99\n"
    "0002    bltn KOBJ   0x564397fc15c0\n"
    "0003    flt  KFLOAT 0.5\n"
    "0004    int  KINT   0\n"
    "0005    int  KINT   1\n"
    "0006 >  int  SLOAD  3  0  #0\n"
    "0007 >  int  SLOAD  1  0  #0\n"
    "0008 >  int  SLOAD  2  0  #0\n"
    "0009 >  int  SLOAD  0  0  #0\n"
    "0010    none LOOP\n"
    "0011 >  tens GLOAD  1  #1\n"
    "0012    none CARG   0011  0000\n"
    "0013    none CALL   0012  0  #2\n"
    "0014 >  tens SLOAD  5  1  #3\n"
    "0015 >  tens GLOAD  0  #3\n"
    "0016    none CARG   0014  0015\n"
    "0017    none CALL   0016  1  #4\n"
    "0018 >  tens SLOAD  4  1  #5\n"
    "0019    bool EQ     0006  0001\n"
    "0020 >  none GUARDF 0019  #5\n"
    "0021    none SSTORE 7  0018\n"
    "0022    none CALL   0018  2  #6\n"
    "0023 >  tens SLOAD  6  1  #7\n"
    "0024    none CARG   0023  0003\n"
    "0025    none CALL   0024  3  #7\n"
    "0026 >  tens SLOAD  5  1  #8\n"
    "0027    none GSTORE 0  0026\n"
    "0028    bool GT     0007  0004\n"
    "0029 >  none GUARDT 0028  #9\n"
    "0030    int  ADD    0009  0008\n"
    "0031    int  SUB    0007  0005\n"
    "0032    int  PHI    0009  0030\n"
    "0033    int  PHI    0007  0031\n"
    "0034    int  PHI    0006  0030\n"
    "SNAP #0 ir=0006 pc=14 frames=[] []\n"
    "SNAP #1 ir=0011 pc=14 frames=[] [0=0009 1=0007 3=0006]\n"
    "SNAP #2 ir=0012 pc=15 frames=[] [0=0009 1=0007 3=0006 6=0011]\n"
    "SNAP #3 ir=0014 pc=16 frames=[] [0=0009 1=0007 3=0006]\n"
    "SNAP #4 ir=0016 pc=17 frames=[] [0=0009 1=0007 3=0006 6=0015]\n"
    "SNAP #5 ir=0018 pc=18 frames=[] [0=0009 1=0007 3=0006]\n"
    "SNAP #6 ir=0022 pc=29 frames=[] [0=0009 1=0007 3=0006 6=0002]\n"
    "SNAP #7 ir=0023 pc=30 frames=[] [0=0009 1=0007 3=0006]\n"
    "SNAP #8 ir=0026 pc=31 frames=[] [0=0009 1=0007 3=0006]\n"
    "SNAP #9 ir=0029 pc=32 frames=[] [0=0009 1=0007 3=0006]\n"
    "CALL #0 arith 2 arith* 0x0 dest=5 seen=0:f32:32\n"
    "CALL #1 arith 0 arith+ 0x0 dest=4 seen=0:f32:32,1:f32:32\n"
    "CALL #2 builtin 0 tanh 0x564397fc15c0 dest=6 seen=0:f32:32\n"
    "CALL #3 arith 2 arith* 0x0 dest=5 seen=0:f32:32\n"
    "ASSUME global=6 value=0x564397fc15c0\n", kExitSource);
  EXPECT_EQ(regions(out), (std::vector<std::string>{"%0 = input : f32[s0]; %1 = input : float; %2 = mul(%0, %1) : f32[s0]; %3 = input : f32[s0]; %4 = add(%2, %3) : f32[s0]; outputs %4", "%0 = input : f32[s0]; %1 = tanh(%0) : f32[s0]; %2 = input : float; %3 = mul(%1, %2) : f32[s0]; outputs %3"})) << out;
}

// `//` (floor division, computed in double and raising for ints) stays its
// own call with its own snapshot, so its errors come at its line: the run
// before it is one operation (not fused) and the run after it is.
const char* kErrorSource =
    "let x = arange(32) * 0.5 + 1.0\n"
    "let y = arange(32) * 0.25\n"
    "for i in range(100) {\n"
    "  x = tanh((y * 1.5) // x) * 0.5 + 2.0\n"
    "}\n"
    "print(item(sum(x)))\n";
TEST(Fusion, AnOperationThatMustRaiseAtItsLineStaysOut) {
  const std::string out = fuse(
    "0000    bltn KOBJ   0x5582274931d0\n"
    "0001    flt  KFLOAT 1.5\n"
    "0002    flt  KFLOAT 0.5\n"
    "0003    flt  KFLOAT 2.0\n"
    "0004    int  KINT   0\n"
    "0005    int  KINT   1\n"
    "0006 >  int  SLOAD  1  0  #0\n"
    "0007 >  int  SLOAD  2  0  #0\n"
    "0008 >  int  SLOAD  0  0  #0\n"
    "0009    none LOOP\n"
    "0010 >  tens GLOAD  1  #1\n"
    "0011    none CARG   0010  0001\n"
    "0012    none CALL   0011  0  #2\n"
    "0013 >  tens SLOAD  8  1  #3\n"
    "0014 >  tens GLOAD  0  #3\n"
    "0015    none CARG   0013  0014\n"
    "0016    none CALL   0015  1  #4\n"
    "0017 >  tens SLOAD  7  1  #5\n"
    "0018    none CALL   0017  2  #5\n"
    "0019 >  tens SLOAD  6  1  #6\n"
    "0020    none CARG   0019  0002\n"
    "0021    none CALL   0020  3  #6\n"
    "0022 >  tens SLOAD  5  1  #7\n"
    "0023    none CARG   0022  0003\n"
    "0024    none CALL   0023  4  #7\n"
    "0025 >  tens SLOAD  4  1  #8\n"
    "0026    none SSTORE 9  0014\n"
    "0027    none GSTORE 0  0025\n"
    "0028    bool GT     0006  0004\n"
    "0029 >  none GUARDT 0028  #9\n"
    "0030    int  ADD    0008  0007\n"
    "0031    int  SUB    0006  0005\n"
    "0032    none SSTORE 3  0030\n"
    "0033    int  PHI    0008  0030\n"
    "0034    int  PHI    0006  0031\n"
    "SNAP #0 ir=0006 pc=15 frames=[] []\n"
    "SNAP #1 ir=0010 pc=16 frames=[] [0=0008 1=0006 6=0000]\n"
    "SNAP #2 ir=0011 pc=17 frames=[] [0=0008 1=0006 6=0000 9=0010]\n"
    "SNAP #3 ir=0013 pc=18 frames=[] [0=0008 1=0006 6=0000]\n"
    "SNAP #4 ir=0015 pc=19 frames=[] [0=0008 1=0006 6=0000 9=0014]\n"
    "SNAP #5 ir=0017 pc=20 frames=[] [0=0008 1=0006 6=0000]\n"
    "SNAP #6 ir=0019 pc=21 frames=[] [0=0008 1=0006]\n"
    "SNAP #7 ir=0022 pc=22 frames=[] [0=0008 1=0006]\n"
    "SNAP #8 ir=0025 pc=23 frames=[] [0=0008 1=0006]\n"
    "SNAP #9 ir=0029 pc=24 frames=[] [0=0008 1=0006]\n"
    "CALL #0 arith 2 arith* 0x0 dest=8 seen=0:f32:32\n"
    "CALL #1 arith 4 arith%2F%2F 0x0 dest=7 seen=0:f32:32,1:f32:32\n"
    "CALL #2 builtin 0 tanh 0x5582274931d0 dest=6 seen=0:f32:32\n"
    "CALL #3 arith 2 arith* 0x0 dest=5 seen=0:f32:32\n"
    "CALL #4 arith 0 arith+ 0x0 dest=4 seen=0:f32:32\n"
    "ASSUME global=3 value=0x5582274931d0\n", kErrorSource);
  EXPECT_EQ(regions(out), (std::vector<std::string>{"%0 = input : f32[s0]; %1 = tanh(%0) : f32[s0]; %2 = input : float; %3 = mul(%1, %2) : f32[s0]; %4 = input : float; %5 = add(%3, %4) : f32[s0]; outputs %5"})) << out;
}

}  // namespace
}  // namespace tessera::jit
