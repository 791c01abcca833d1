// DsePass: dead-store elimination (LuaJIT's lj_opt_dse_* on a straight-line
// trace). A list element, tensor element or global store (LSTORE, TSTORE,
// GSTORE) is removed when a later store must overwrite the same memory
// (AliasAnalysis says MustAlias) and nothing between them can observe it:
//  - no load that may alias it (a load may read the first store's value);
//  - no CALL, FPUSH or FPOP (ir.def's clob flag: helpers read any memory);
//  - no guard or EXIT (the interpreter resumes at an exit and would see
//    memory without the first store: guards are barriers, as in LuaJIT);
//  - not across LOOP (or into the PHIs at the end of the body): the store
//    in the next iteration is a different execution.
// Reference counting: a removed store of an object no longer gives it (and
// then takes back) one reference; the later store still releases what was
// there before. That is only safe while the object keeps its own owner (an
// interpreter register or global, see SSTORE in ir.def) until the later
// store: for an object-valued store, any store in between that may release
// an object (SSTORE, GSTORE, another LSTORE) also keeps it. TSTOREs store
// scalars and never release anything.
// SSTOREs are never candidates: exits and frames read the slots.
#pragma once

#include "optimizer/pass.h"

namespace tessera::jit {

class DsePass : public TracePass {
 public:
  const char* name() const override { return "dse"; }
  bool run(TraceIR& ir) override;
};

}  // namespace tessera::jit
