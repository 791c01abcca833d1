// AliasAnalysis on traces in the text form: each rule of alias.h, where it
// proves NoAlias or MustAlias and where it must answer MayAlias; then its
// use in CsePass (IR in / IR out): a store forgets only what it may alias.
#include <gtest/gtest.h>

#include <ostream>
#include <stdexcept>

#include "optimizer/alias.h"
#include "optimizer/cse.h"
#include "tests/optimizer/pass_test_support.h"
#include "tracer/trace_ir.h"

namespace tessera::jit {

// Readable failures: "MayAlias" rather than a number.
void PrintTo(AliasResult r, std::ostream* os) { *os << alias_result_name(r); }

namespace {

constexpr AliasResult kNo = AliasResult::NoAlias;
constexpr AliasResult kMay = AliasResult::MayAlias;
constexpr AliasResult kMust = AliasResult::MustAlias;

// Lists a (slot 0) and b (slot 1), ints i (slot 2) and j (slot 3).
const char* kListTrace =
    "0000    int  KINT   1\n"
    "0001    int  KINT   2\n"
    "0002 >  list SLOAD  0  0  #0\n"
    "0003 >  list SLOAD  1  0  #0\n"
    "0004 >  int  SLOAD  2  0  #0\n"
    "0005 >  int  SLOAD  3  0  #0\n"
    "0006    int  ADD    0004  0000\n"  // i + 1
    "0007 >  int  LLOAD  0002  0004  #0\n"  // a[i]
    "0008    none LREF   0002  0004\n"
    "0009    none LSTORE 0008  0007\n"  // a[i] = ...
    "0010    none LREF   0002  0006\n"
    "0011    none LSTORE 0010  0007\n"  // a[i + 1] = ...
    "0012 >  int  LLOAD  0003  0004  #0\n"  // b[i]
    "0013 >  int  LLOAD  0002  0005  #0\n"  // a[j]
    "0014 >  int  LLOAD  0002  0000  #0\n"  // a[1]
    "0015 >  int  LLOAD  0002  0001  #0\n"  // a[2]
    "0016    int  ADD    0000  0004\n"  // 1 + i
    "0017 >  int  LLOAD  0002  0016  #0\n"  // a[1 + i]
    "0018    int  SUB    0006  0000\n"  // (i + 1) - 1
    "0019 >  int  LLOAD  0002  0018  #0\n"  // a[(i + 1) - 1]
    "0020    int  MUL    0004  0001\n"  // i * 2
    "0021    int  ADD    0004  0004\n"  // i + i
    "0022 >  int  LLOAD  0002  0020  #0\n"  // a[i * 2]
    "0023 >  int  LLOAD  0002  0021  #0\n"  // a[i + i]
    "0024 >  int  GLOAD  4  #0\n"
    "0025    none GSTORE 4  0007\n"
    "0026    none GSTORE 5  0007\n"
    "0027 >  none EXIT    #0\n"
    "SNAP #0 ir=0002 pc=0 frames=[] []\n";

TEST(Alias, GlobalsAliasExactlyWhenTheirIndicesAreEqual) {
  const TraceIR ir = parse_ir(kListTrace);
  const AliasAnalysis aa(ir);
  EXPECT_EQ(aa.alias(24, 25), kMust);  // GLOAD 4, GSTORE 4
  EXPECT_EQ(aa.alias(25, 26), kNo);    // GSTORE 4, GSTORE 5
}

TEST(Alias, ListElementsNeverAliasGlobals) {
  const TraceIR ir = parse_ir(kListTrace);
  const AliasAnalysis aa(ir);
  EXPECT_EQ(aa.alias(9, 25), kNo);
  EXPECT_EQ(aa.alias(24, 7), kNo);
}

TEST(Alias, SameListAndSameIndexMustAlias) {
  const TraceIR ir = parse_ir(kListTrace);
  const AliasAnalysis aa(ir);
  EXPECT_EQ(aa.alias(7, 9), kMust);    // LLOAD a i, LSTORE through LREF a i
  EXPECT_EQ(aa.alias(8, 9), kMust);    // the LREF itself
  EXPECT_EQ(aa.alias(11, 17), kMust);  // i + 1 and 1 + i
  EXPECT_EQ(aa.alias(7, 19), kMust);   // i and (i + 1) - 1
  EXPECT_EQ(aa.alias(22, 23), kMust);  // i * 2 and i + i
}

TEST(Alias, SameListAndIndicesThatDifferByAConstantDoNotAlias) {
  const TraceIR ir = parse_ir(kListTrace);
  const AliasAnalysis aa(ir);
  EXPECT_EQ(aa.alias(9, 11), kNo);   // i and i + 1
  EXPECT_EQ(aa.alias(7, 17), kNo);   // i and 1 + i
  EXPECT_EQ(aa.alias(14, 15), kNo);  // 1 and 2
}

TEST(Alias, AnotherListReferenceOrAnUnrelatedIndexMayAlias) {
  const TraceIR ir = parse_ir(kListTrace);
  const AliasAnalysis aa(ir);
  EXPECT_EQ(aa.alias(9, 12), kMay);  // a[i] and b[i]: a and b may be one list
  EXPECT_EQ(aa.alias(9, 13), kMay);  // a[i] and a[j]
  EXPECT_EQ(aa.alias(7, 14), kMay);  // a[i] and a[1]
  EXPECT_EQ(aa.alias(7, 22), kMay);  // a[i] and a[i * 2]: both are 0 when i is
}

// A resolver (a pass's pending substitution) makes two references one value.
TEST(Alias, ResolverMergesReferences) {
  const TraceIR ir = parse_ir(kListTrace);
  const AliasAnalysis aa(ir, [](IRRef r) { return r == 3 ? IRRef{2} : r; });  // b is a
  EXPECT_EQ(aa.alias(9, 12), kMust);
}

// Tensors t (slot 0, f32) and u (slot 1, f32), v (slot 2, i64); rank-2
// indices i, j (slots 3, 4) into t of dimension d (TDIM).
const char* kTensorTrace =
    "0000    int  KINT   1\n"
    "0001 >  tens SLOAD  0  0  #0\n"
    "0002 >  tens SLOAD  1  0  #0\n"
    "0003 >  tens SLOAD  2  0  #0\n"
    "0004 >  int  SLOAD  3  0  #0\n"
    "0005 >  int  SLOAD  4  0  #0\n"
    "0006    int  TDIM   0001  1\n"
    "0007    int  MUL    0004  0006\n"
    "0008    int  ADD    0007  0005\n"  // i * d + j
    "0009    int  TIDX   0008  0\n"
    "0010    int  ADD    0005  0000\n"  // j + 1
    "0011    int  ADD    0007  0010\n"  // i * d + (j + 1)
    "0012    int  TIDX   0011  0\n"
    "0013    flt  TLOAD  0001  0009\n"  // t[i, j]
    "0014    none TREF   0001  0012\n"
    "0015    none TSTORE 0014  0013\n"  // t[i, j + 1] = ...
    "0016    none TREF   0001  0009\n"
    "0017    none TSTORE 0016  0013\n"  // t[i, j] = ...
    "0018    flt  TLOAD  0002  0009\n"  // u at t's index
    "0019    int  TIDX   0008  4\n"
    "0020    int  TLOAD  0003  0019\n"  // v (i64) at t's index
    "0021 >  int  LLOAD  0001  0004  #0\n"
    "0022 >  none EXIT    #0\n"
    "SNAP #0 ir=0001 pc=0 frames=[] []\n";

TEST(Alias, SameTensorElementMustAliasNeighboursDoNot) {
  const TraceIR ir = parse_ir(kTensorTrace);
  const AliasAnalysis aa(ir);
  EXPECT_EQ(aa.alias(13, 17), kMust);  // t[i, j] load and store
  EXPECT_EQ(aa.alias(13, 15), kNo);    // t[i, j] and t[i, j + 1]
}

TEST(Alias, TensorsOfTheSameDtypeMayBeOneTensor) {
  const TraceIR ir = parse_ir(kTensorTrace);
  const AliasAnalysis aa(ir);
  EXPECT_EQ(aa.alias(17, 18), kMay);
}

// A tensor's dtype never changes and it owns its buffer (vm/tensor/tensor.h):
// an f32 and an i64 element are in two different buffers.
TEST(Alias, TensorsOfDifferentDtypesDoNotAlias) {
  const TraceIR ir = parse_ir(kTensorTrace);
  const AliasAnalysis aa(ir);
  EXPECT_EQ(aa.alias(17, 20), kNo);
}

TEST(Alias, TensorElementsNeverAliasListElements) {
  const TraceIR ir = parse_ir(kTensorTrace);
  const AliasAnalysis aa(ir);
  EXPECT_EQ(aa.alias(17, 21), kNo);
}

TEST(Alias, StoreThroughAnUnknownAddressMayAliasAnyElement) {
  const TraceIR ir = parse_ir(
      "0000 >  list SLOAD  0  0  #0\n"
      "0001 >  int  SLOAD  1  0  #0\n"
      "0002 >  int  LLOAD  0000  0001  #0\n"
      "0003    none LSTORE 0001  0002\n"  // op1 is not an LREF
      "0004 >  none EXIT    #0\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n");
  const AliasAnalysis aa(ir);
  EXPECT_EQ(aa.location(3).object, kNoRef);
  EXPECT_EQ(aa.alias(2, 3), kMay);
  EXPECT_EQ(aa.alias(3, 3), kMay);
}

TEST(Alias, LocationOfAnInstructionThatIsNoMemoryAccessThrows) {
  const TraceIR ir = parse_ir(kListTrace);
  const AliasAnalysis aa(ir);
  EXPECT_THROW(aa.location(6), std::invalid_argument);  // ADD
  EXPECT_THROW(aa.location(1000), std::invalid_argument);
  EXPECT_FALSE(AliasAnalysis::is_memory_access(IROp::SSTORE));
  EXPECT_TRUE(AliasAnalysis::is_memory_access(IROp::TREF));
}

// CsePass with the alias analysis: x[i] = p; x[i + 1] = q; the second store
// does not kill the first one's forwarding, so both loads go.
TEST(AliasInCse, StoresToNeighbouringElementsForwardBothValues) {
  CsePass cse;
  EXPECT_IR_EQ(passtest::apply(cse,
                               "0000    int  KINT   1\n"
                               "0001 >  list SLOAD  0  0  #0\n"
                               "0002 >  int  SLOAD  1  0  #0\n"
                               "0003 >  flt  SLOAD  2  0  #0\n"
                               "0004 >  flt  SLOAD  3  0  #0\n"
                               "0005    int  ADD    0002  0000\n"
                               "0006    none LREF   0001  0002\n"
                               "0007    none LSTORE 0006  0003\n"
                               "0008    none LREF   0001  0005\n"
                               "0009    none LSTORE 0008  0004\n"
                               "0010 >  flt  LLOAD  0001  0002  #1\n"
                               "0011 >  flt  LLOAD  0001  0005  #1\n"
                               "0012    flt  FSUB   0010  0011\n"
                               "0013 >  none EXIT    #2\n"
                               "SNAP #0 ir=0001 pc=0 frames=[] []\n"
                               "SNAP #1 ir=0010 pc=3 frames=[] []\n"
                               "SNAP #2 ir=0013 pc=5 frames=[] [4=0012]\n"),
               "0000    int  KINT   1\n"
               "0001 >  list SLOAD  0  0  #0\n"
               "0002 >  int  SLOAD  1  0  #0\n"
               "0003 >  flt  SLOAD  2  0  #0\n"
               "0004 >  flt  SLOAD  3  0  #0\n"
               "0005    int  ADD    0002  0000\n"
               "0006    none LREF   0001  0002\n"
               "0007    none LSTORE 0006  0003\n"
               "0008    none LREF   0001  0005\n"
               "0009    none LSTORE 0008  0004\n"
               "0010    flt  FSUB   0003  0004\n"
               "0011 >  none EXIT    #2\n"
               "SNAP #0 ir=0001 pc=0 frames=[] []\n"
               "SNAP #1 ir=0010 pc=3 frames=[] []\n"
               "SNAP #2 ir=0011 pc=5 frames=[] [4=0010]\n");
}

// a[i], then b[i] = ...: b may be a, so a[i] is read again.
TEST(AliasInCse, StoreThroughAnotherListRefBetweenTwoLoadsKeepsBoth) {
  CsePass cse;
  const char* in =
      "0000 >  list SLOAD  0  0  #0\n"
      "0001 >  list SLOAD  1  0  #0\n"
      "0002 >  int  SLOAD  2  0  #0\n"
      "0003 >  int  LLOAD  0000  0002  #1\n"
      "0004    none LREF   0001  0002\n"
      "0005    none LSTORE 0004  0002\n"
      "0006 >  int  LLOAD  0000  0002  #2\n"
      "0007    int  ADD    0003  0006\n"
      "0008 >  none EXIT    #3\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0003 pc=2 frames=[] []\n"
      "SNAP #2 ir=0006 pc=4 frames=[] []\n"
      "SNAP #3 ir=0008 pc=6 frames=[] [5=0007]\n";
  EXPECT_IR_EQ(passtest::apply(cse, in), in);
}

// t and u are f32 tensors, v an i64 tensor. t[k] survives stores to t[k + 1]
// and v[k]; a store to u[k] (u may be t) kills it.
TEST(AliasInCse, TensorStoreKillsOnlyTheLoadsItMayAlias) {
  CsePass cse;
  EXPECT_IR_EQ(passtest::apply(cse,
                               "0000    int  KINT   1\n"
                               "0001 >  tens SLOAD  0  0  #0\n"
                               "0002 >  tens SLOAD  1  0  #0\n"
                               "0003 >  tens SLOAD  2  0  #0\n"
                               "0004 >  int  SLOAD  3  0  #0\n"
                               "0005    int  TIDX   0004  0\n"
                               "0006    int  ADD    0004  0000\n"
                               "0007    int  TIDX   0006  0\n"
                               "0008    int  TIDX   0004  4\n"
                               "0009    flt  TLOAD  0001  0005\n"
                               "0010    none TREF   0001  0007\n"
                               "0011    none TSTORE 0010  0009\n"
                               "0012    none TREF   0003  0008\n"
                               "0013    none TSTORE 0012  0004\n"
                               "0014    flt  TLOAD  0001  0005\n"
                               "0015    none TREF   0002  0005\n"
                               "0016    none TSTORE 0015  0014\n"
                               "0017    flt  TLOAD  0001  0005\n"
                               "0018    flt  FADD   0014  0017\n"
                               "0019 >  none EXIT    #1\n"
                               "SNAP #0 ir=0001 pc=0 frames=[] []\n"
                               "SNAP #1 ir=0019 pc=9 frames=[] [5=0018]\n"),
               "0000    int  KINT   1\n"
               "0001 >  tens SLOAD  0  0  #0\n"
               "0002 >  tens SLOAD  1  0  #0\n"
               "0003 >  tens SLOAD  2  0  #0\n"
               "0004 >  int  SLOAD  3  0  #0\n"
               "0005    int  TIDX   0004  0\n"
               "0006    int  ADD    0004  0000\n"
               "0007    int  TIDX   0006  0\n"
               "0008    int  TIDX   0004  4\n"
               "0009    flt  TLOAD  0001  0005\n"
               "0010    none TREF   0001  0007\n"
               "0011    none TSTORE 0010  0009\n"
               "0012    none TREF   0003  0008\n"
               "0013    none TSTORE 0012  0004\n"
               "0014    none TREF   0002  0005\n"
               "0015    none TSTORE 0014  0009\n"
               "0016    flt  TLOAD  0001  0005\n"
               "0017    flt  FADD   0009  0016\n"
               "0018 >  none EXIT    #1\n"
               "SNAP #0 ir=0001 pc=0 frames=[] []\n"
               "SNAP #1 ir=0018 pc=9 frames=[] [5=0017]\n");
}

}  // namespace
}  // namespace tessera::jit
