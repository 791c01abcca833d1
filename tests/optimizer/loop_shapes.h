// IR shapes that more than one pass's tests start from.
#pragma once

namespace tessera::jit::passtest {

// for k in range(...) { s += xs[k] } as recorded: slot 4 the index i, 5 the
// count c, 6 the step s, 7 the loop variable k; n = len(xs) invariant.
inline constexpr const char* kForLoop =
    "0000    int  KINT   0\n"
    "0001    int  KINT   1\n"
    "0002 >  list SLOAD  1  0  #0\n"
    "0003 >  int  SLOAD  7  0  #0\n"
    "0004 >  int  SLOAD  5  0  #0\n"
    "0005 >  int  SLOAD  6  0  #0\n"
    "0006 >  int  SLOAD  4  0  #0\n"
    "0007 >  int  SLOAD  3  0  #0\n"
    "0008    int  LLEN   0002\n"
    "0009    none LOOP\n"
    "0010    bool ULT    0003  0008\n"
    "0011 >  none GUARDT 0010  #1\n"
    "0012 >  int  LLOAD  0002  0003  #1\n"
    "0013    int  ADD    0007  0012\n"
    "0014    bool GT     0004  0000\n"
    "0015 >  none GUARDT 0014  #2\n"
    "0016    int  ADD    0006  0005\n"
    "0017    int  SUB    0004  0001\n"
    "0018    int  PHI    0007  0013\n"
    "0019    int  PHI    0006  0016\n"
    "0020    int  PHI    0004  0017\n"
    "0021    int  PHI    0003  0016\n"
    "SNAP #0 ir=0002 pc=20 frames=[] []\n"
    "SNAP #1 ir=0011 pc=21 frames=[] [3=0007 4=0006 5=0004 7=0003]\n"
    "SNAP #2 ir=0015 pc=23 frames=[] [3=0013 4=0006 5=0004 7=0003]\n";

}  // namespace tessera::jit::passtest
