// NumberLoadPass, IR in / IR out: int list elements that meet only floats
// become number loads (LLOADN), float elements stay typed loads, and so do
// loads where an int would show (an int meeting an int, a use that is not
// float arithmetic, a snapshot that names the value past a store).
#include <gtest/gtest.h>

#include <string>

#include "optimizer/number_load.h"
#include "tests/optimizer/pass_test_support.h"

namespace tessera::jit {
namespace {

// row[j] = row[j] + aik * bk[j] with aik a float, recorded where row[j] and
// bk[j] were ints: both loads become number loads, their CONVs go, and the
// second load's guard, whose snapshot names the first load's value (the
// register that holds row[j]), exits through the first load's snapshot.
TEST(NumberLoad, IntElementsThatMeetOnlyFloatsAreLoadedAsFloats) {
  NumberLoadPass pass;
  EXPECT_IR_EQ(passtest::apply(pass,
                     "0000 >  list SLOAD  0  0  #0\n"
                     "0001 >  list SLOAD  1  0  #0\n"
                     "0002 >  flt  SLOAD  2  0  #0\n"
                     "0003 >  int  SLOAD  3  0  #0\n"
                     "0004 >  int  LLOAD  0000  0003  #1\n"
                     "0005 >  int  LLOAD  0001  0003  #2\n"
                     "0006    flt  CONV   0005\n"
                     "0007    flt  FMUL   0002  0006\n"
                     "0008    flt  CONV   0004\n"
                     "0009    flt  FADD   0008  0007\n"
                     "0010    none LREF   0000  0003\n"
                     "0011    none LSTORE 0010  0009\n"
                     "0012 >  none EXIT    #3\n"
                     "SNAP #0 ir=0000 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0004 pc=2 frames=[] []\n"
                     "SNAP #2 ir=0005 pc=3 frames=[] [5=0004]\n"
                     "SNAP #3 ir=0012 pc=9 frames=[] []\n"),
               "0000 >  list SLOAD  0  0  #0\n"
               "0001 >  list SLOAD  1  0  #0\n"
               "0002 >  flt  SLOAD  2  0  #0\n"
               "0003 >  int  SLOAD  3  0  #0\n"
               "0004 >  flt  LLOADN 0000  0003  #1\n"
               "0005 >  flt  LLOADN 0001  0003  #1\n"
               "0006    flt  FMUL   0002  0005\n"
               "0007    flt  FADD   0004  0006\n"
               "0008    none LREF   0000  0003\n"
               "0009    none LSTORE 0008  0007\n"
               "0010 >  none EXIT    #3\n"
               "SNAP #0 ir=0000 pc=0 frames=[] []\n"
               "SNAP #1 ir=0004 pc=2 frames=[] []\n"
               "SNAP #2 ir=0005 pc=3 frames=[] [5=0004]\n"
               "SNAP #3 ir=0010 pc=9 frames=[] []\n");
}

// The same kind of statement recorded where the elements were floats (a
// stencil's u[i - 1] - 2.0 * u[i]): nothing says the row holds ints, so
// the loads stay typed (one tag check, no conversion).
TEST(NumberLoad, FloatElementsStayTypedLoads) {
  NumberLoadPass pass;
  const char* text =
      "0000    flt  KFLOAT 2.0\n"
      "0001 >  list SLOAD  0  0  #0\n"
      "0002 >  flt  SLOAD  2  0  #0\n"
      "0003 >  int  SLOAD  3  0  #0\n"
      "0004 >  flt  LLOAD  0001  0003  #1\n"
      "0005    flt  FMUL   0000  0004\n"
      "0006 >  flt  LLOAD  0001  0003  #2\n"
      "0007    flt  FSUB   0006  0005\n"
      "0008    flt  FDIV   0007  0002\n"
      "0009 >  none EXIT    #3\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0004 pc=2 frames=[] []\n"
      "SNAP #2 ir=0006 pc=3 frames=[] []\n"
      "SNAP #3 ir=0009 pc=9 frames=[] [4=0008]\n";
  EXPECT_IR_EQ(passtest::apply(pass, text), print_ir(parse_ir(text)));
}

// row[j] + aik * bk[j] with aik a float, recorded where bk[j] was a float
// with ints beside it (`mixed`, kMixedRow: a row whose entries alternate):
// bk[j] becomes a number load, and loses the flag; row[j], a float of a
// float row, stays typed.
TEST(NumberLoad, FloatOfAMixedRowBecomesANumberLoad) {
  NumberLoadPass pass;
  EXPECT_IR_EQ(passtest::apply(pass,
                     "0000 >  list SLOAD  0  0  #0\n"
                     "0001 >  list SLOAD  1  0  #0\n"
                     "0002 >  flt  SLOAD  2  0  #0\n"
                     "0003 >  int  SLOAD  3  0  #0\n"
                     "0004 >  flt  LLOAD  0000  0003  #1\n"
                     "0005 >  flt  LLOAD  0001  0003 mixed  #2\n"
                     "0006    flt  FMUL   0002  0005\n"
                     "0007    flt  FADD   0004  0006\n"
                     "0008 >  none EXIT    #3\n"
                     "SNAP #0 ir=0000 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0004 pc=2 frames=[] []\n"
                     "SNAP #2 ir=0005 pc=3 frames=[] [5=0004]\n"
                     "SNAP #3 ir=0008 pc=9 frames=[] []\n"),
               "0000 >  list SLOAD  0  0  #0\n"
               "0001 >  list SLOAD  1  0  #0\n"
               "0002 >  flt  SLOAD  2  0  #0\n"
               "0003 >  int  SLOAD  3  0  #0\n"
               "0004 >  flt  LLOAD  0000  0003  #1\n"
               "0005 >  flt  LLOADN 0001  0003  #2\n"
               "0006    flt  FMUL   0002  0005\n"
               "0007    flt  FADD   0004  0006\n"
               "0008 >  none EXIT    #3\n"
               "SNAP #0 ir=0000 pc=0 frames=[] []\n"
               "SNAP #1 ir=0004 pc=2 frames=[] []\n"
               "SNAP #2 ir=0005 pc=3 frames=[] [5=0004]\n"
               "SNAP #3 ir=0008 pc=9 frames=[] []\n");
}

// A mixed row's float where an int would show: added to the int of a CONV
// (int + int stays an int), compared, or stored. The loads stay typed.
TEST(NumberLoad, FloatOfAMixedRowWhoseIntWouldShowStaysTyped) {
  NumberLoadPass pass;
  const char* text =
      "0000 >  list SLOAD  0  0  #0\n"
      "0001 >  int  SLOAD  3  0  #0\n"
      "0002 >  flt  LLOAD  0000  0001 mixed  #1\n"
      "0003    flt  CONV   0001\n"
      "0004    flt  FADD   0002  0003\n"
      "0005 >  flt  LLOAD  0000  0001 mixed  #1\n"
      "0006    bool LT     0005  0004\n"
      "0007 >  none GUARDT 0006  #1\n"
      "0008 >  flt  LLOAD  0000  0001 mixed  #1\n"
      "0009    none LREF   0000  0001\n"
      "0010    none LSTORE 0009  0008\n"
      "0011 >  none EXIT    #2\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=2 frames=[] []\n"
      "SNAP #2 ir=0011 pc=9 frames=[] [4=0004]\n";
  EXPECT_IR_EQ(passtest::apply(pass, text), print_ir(parse_ir(text)));
}

// x / 3 and x * 2.5 with x an int element: the interpreter divides an int
// by an int as floats, and 2.5 is a float to it, so the int means the same
// as its float.
TEST(NumberLoad, TrueDivisionAndFloatConstantsTakeAnInt) {
  NumberLoadPass pass;
  EXPECT_IR_EQ(passtest::apply(pass,
                     "0000    flt  KFLOAT 3.0 int\n"
                     "0001    flt  KFLOAT 2.5\n"
                     "0002 >  list SLOAD  0  0  #0\n"
                     "0003 >  int  SLOAD  1  0  #0\n"
                     "0004 >  int  LLOAD  0002  0003  #1\n"
                     "0005    flt  CONV   0004\n"
                     "0006    flt  FDIV   0005  0000\n"
                     "0007    flt  FMUL   0006  0001\n"
                     "0008 >  int  LLOAD  0002  0003  #2\n"
                     "0009    flt  CONV   0008\n"
                     "0010    flt  FMUL   0001  0009\n"
                     "0011    flt  FADD   0007  0010\n"
                     "0012 >  none EXIT    #3\n"
                     "SNAP #0 ir=0002 pc=0 frames=[] []\n"
                     "SNAP #1 ir=0004 pc=2 frames=[] []\n"
                     "SNAP #2 ir=0008 pc=3 frames=[] []\n"
                     "SNAP #3 ir=0012 pc=9 frames=[] [3=0011]\n"),
               "0000    flt  KFLOAT 3.0 int\n"
               "0001    flt  KFLOAT 2.5\n"
               "0002 >  list SLOAD  0  0  #0\n"
               "0003 >  int  SLOAD  1  0  #0\n"
               "0004 >  flt  LLOADN 0002  0003  #1\n"
               "0005    flt  FDIV   0004  0000\n"
               "0006    flt  FMUL   0005  0001\n"
               "0007 >  flt  LLOADN 0002  0003  #2\n"
               "0008    flt  FMUL   0001  0007\n"
               "0009    flt  FADD   0006  0008\n"
               "0010 >  none EXIT    #3\n"
               "SNAP #0 ir=0002 pc=0 frames=[] []\n"
               "SNAP #1 ir=0004 pc=2 frames=[] []\n"
               "SNAP #2 ir=0007 pc=3 frames=[] []\n"
               "SNAP #3 ir=0010 pc=9 frames=[] [3=0009]\n");
}

// Each of these would show an int where the interpreter has one: the loads
// stay as they are.
TEST(NumberLoad, LoadsWhoseIntWouldShowStayTyped) {
  NumberLoadPass pass;
  const char* kept[] = {
      // x * x: an int times an int is an int.
      "0000 >  list SLOAD  0  0  #0\n"
      "0001 >  int  SLOAD  1  0  #0\n"
      "0002 >  flt  LLOAD  0000  0001  #1\n"
      "0003    flt  FMUL   0002  0002\n"
      "0004 >  none EXIT    #2\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=2 frames=[] []\n"
      "SNAP #2 ir=0004 pc=9 frames=[] [3=0003]\n",
      // a float element plus an int converted (an int register): int + int.
      "0000 >  list SLOAD  0  0  #0\n"
      "0001 >  int  SLOAD  1  0  #0\n"
      "0002 >  flt  LLOAD  0000  0001  #1\n"
      "0003    flt  CONV   0001\n"
      "0004    flt  FADD   0002  0003\n"
      "0005 >  none EXIT    #2\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=2 frames=[] []\n"
      "SNAP #2 ir=0005 pc=9 frames=[] [3=0004]\n",
      // an int element used as an int (an index, a sum of ints).
      "0000 >  list SLOAD  0  0  #0\n"
      "0001 >  int  SLOAD  1  0  #0\n"
      "0002 >  int  LLOAD  0000  0001  #1\n"
      "0003    int  ADD    0002  0001\n"
      "0004 >  none EXIT    #2\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0002 pc=2 frames=[] []\n"
      "SNAP #2 ir=0004 pc=9 frames=[] [3=0003]\n",
      // a float element compared (an int compares exactly, not as a float).
      "0000 >  list SLOAD  0  0  #0\n"
      "0001 >  flt  SLOAD  1  0  #0\n"
      "0002 >  int  SLOAD  2  0  #0\n"
      "0003 >  flt  LLOAD  0000  0002  #1\n"
      "0004    bool LT     0003  0001\n"
      "0005 >  none GUARDT 0004  #2\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0003 pc=2 frames=[] []\n"
      "SNAP #2 ir=0005 pc=5 frames=[] []\n",
      // x * 3: the float of an int constant is an int to the interpreter,
      // and an int times an int is an int (which wraps).
      "0000    flt  KFLOAT 3.0 int\n"
      "0001 >  list SLOAD  0  0  #0\n"
      "0002 >  int  SLOAD  1  0  #0\n"
      "0003 >  flt  LLOAD  0001  0002  #1\n"
      "0004    flt  FMUL   0003  0000\n"
      "0005 >  none EXIT    #2\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0003 pc=2 frames=[] []\n"
      "SNAP #2 ir=0005 pc=9 frames=[] [3=0004]\n",
      // 5 - x, an int element met by the same constant as a CONV's operand.
      "0000    flt  KFLOAT 5.0 int\n"
      "0001 >  list SLOAD  0  0  #0\n"
      "0002 >  int  SLOAD  1  0  #0\n"
      "0003 >  int  LLOAD  0001  0002  #1\n"
      "0004    flt  CONV   0003\n"
      "0005    flt  FSUB   0000  0004\n"
      "0006 >  none EXIT    #2\n"
      "SNAP #0 ir=0001 pc=0 frames=[] []\n"
      "SNAP #1 ir=0003 pc=2 frames=[] []\n"
      "SNAP #2 ir=0006 pc=9 frames=[] [3=0005]\n",
      // a guard after a store names the element's register: exiting at the
      // load would store again.
      "0000 >  list SLOAD  0  0  #0\n"
      "0001 >  flt  SLOAD  1  0  #0\n"
      "0002 >  int  SLOAD  2  0  #0\n"
      "0003 >  flt  LLOAD  0000  0002  #1\n"
      "0004    none LREF   0000  0002\n"
      "0005    none LSTORE 0004  0001\n"
      "0006    bool LT     0001  0001\n"
      "0007 >  none GUARDT 0006  #2\n"
      "0008    flt  FADD   0003  0001\n"
      "0009 >  none EXIT    #3\n"
      "SNAP #0 ir=0000 pc=0 frames=[] []\n"
      "SNAP #1 ir=0003 pc=2 frames=[] []\n"
      "SNAP #2 ir=0007 pc=4 frames=[] [6=0003]\n"
      "SNAP #3 ir=0009 pc=9 frames=[] [7=0008]\n",
  };
  for (const char* ir : kept) EXPECT_IR_EQ(passtest::apply(pass, ir), ir);
}

}  // namespace
}  // namespace tessera::jit
