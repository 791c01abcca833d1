#include "runtime/trace_provenance.h"

#include "runtime/trace.h"
#include "vm/bytecode/bytecode.h"
#include "vm/bytecode/disassembler.h"

namespace tessera::jit {

std::vector<IrProvenance> ir_provenance(const TraceIR& ir) {
  std::vector<IrProvenance> out(ir.size());
  for (IRRef r = 0; r < ir.size(); ++r) {
    const InsOrigin* o = ir.origin_of(r);
    if (!o || !o->proto) continue;
    const FunctionProto& fn = *o->proto;
    IrProvenance& p = out[r];
    p.line = source_line(fn, o->pc);
    p.pc = o->pc;
    p.function = fn.name;
    p.bytecode = disassemble_instruction(fn, o->pc);
  }
  return out;
}

namespace {

// The local in register `reg` of `fn` at `pc`, or "".
std::string local_at(const FunctionProto* fn, uint32_t reg, uint32_t pc) {
  if (!fn) return {};
  for (const auto& l : fn->locals)
    if (l.reg == reg && l.start_pc <= pc && pc <= l.end_pc) return l.name;
  return {};
}

}  // namespace

std::vector<std::map<uint32_t, std::string>> snapshot_local_names(const TraceIR& ir, const FunctionProto* base) {
  std::vector<std::map<uint32_t, std::string>> out;
  for (const Snapshot& s : ir.snapshots()) {
    std::map<uint32_t, std::string> names;
    // Frames, outermost first: the base frame from slot 0, then each
    // inlined one from its base. A frame's pc is where it is: the snapshot's
    // for the innermost, the call it made for the others.
    struct Frame {
      const FunctionProto* fn;
      uint32_t base, pc;
    };
    std::vector<Frame> frames;
    frames.push_back({s.base_proto ? s.base_proto : base, 0, s.frames.empty() ? s.pc : s.frames.front().call_pc});
    for (size_t f = 0; f < s.frames.size(); ++f)
      frames.push_back({s.frames[f].proto, s.frames[f].base, f + 1 < s.frames.size() ? s.frames[f + 1].call_pc : s.pc});
    for (const SnapshotEntry& e : s.entries) {
      const Frame* at = nullptr;
      for (const Frame& f : frames)
        if (f.base <= e.slot) at = &f;
      if (!at) continue;
      std::string name = local_at(at->fn, e.slot - at->base, at->pc);
      if (!name.empty()) names[e.slot] = std::move(name);
    }
    out.push_back(std::move(names));
  }
  return out;
}

}  // namespace tessera::jit
