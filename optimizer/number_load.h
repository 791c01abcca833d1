// NumberLoadPass: list elements that may be ints or floats, loaded as
// floats where the trace uses them only as the interpreter would use either.
//
// A list of numbers whose elements mix ints and floats (a matrix of lists
// whose rows turn float as they are reduced) makes every load of an element
// a type guard that fails for the other type. Where every use means the
// same for an int converted early, the type does not matter: the
// interpreter computes int + float (- *) as the float of the int and the
// float, and int / anything as floats, so the trace may load either as a
// float (LLOADN: an int is converted, anything else exits).
// An LLOAD is rewritten when
//  - it is an int whose uses are all CONVs (the recorder converted it
//    because it met a float: the recording saw the row mix ints and
//    floats), the CONVs becoming the LLOADN; or a float the recorder saw
//    with ints beside it in its list (kMixedRow, trace_ir.h: a row whose
//    entries alternate) whose uses are all + - * /;
//  - the other operand of each FADD, FSUB and FMUL a CONV meets is a float
//    to the interpreter too: not a CONV, nor the float of an int constant (a
//    folded CONV, TraceIR::kfloat's an_int: `x * 3`), nor another LLOADN,
//    nor the value itself (`x + x`): an int meeting an int gives an int,
//    which wraps and prints without a point; and
//  - every later snapshot that names the loaded value (a register that
//    holds it between the load and its use) can be replaced by the load's
//    own: the exit would write a float where the interpreter may have had
//    the int, so the guard exits at the load instead, re-running the
//    instructions after it, which is right only if none of them has a side
//    effect (no store, no call, no frame push or pop, not the loop's
//    back-edge) and the frames are the same. Otherwise the load stays.
// Any other float element stays a typed load, one tag check and no
// conversion (a row of floats at machine speed); where an int turns up there later, the
// trace leaves and the side trace or peer loop recorded for it loads the
// number there. (Rewriting float loads too, on the chance of an int, made
// every float row pay a conversion and a select per element: 2.3x slower
// on the stencils of the corpus. Without kMixedRow, matrix_mixed, whose
// rows alternate ints and floats, left its trace at every other element.)
#pragma once

#include "optimizer/pass.h"

namespace tessera::jit {

class NumberLoadPass : public TracePass {
 public:
  const char* name() const override { return "numload"; }
  bool run(TraceIR& ir) override;
};

}  // namespace tessera::jit
