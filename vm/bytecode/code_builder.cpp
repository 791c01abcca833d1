#include "vm/bytecode/code_builder.h"

namespace tessera {

uint32_t CodeBuilder::emit(Instr i) {
  code_.push_back(i);
  lines_.push_back(line_);
  cols_.push_back(col_);
  return pc() - 1;
}

uint32_t CodeBuilder::emit_jump(Op op, int a, Label& to) {
  uint32_t at = emit_asbx(op, a, 0);
  if (to.target >= 0)
    patch(at, to.target);
  else
    to.pending.push_back(at);
  return at;
}

void CodeBuilder::bind(Label& l) {
  l.target = pc();
  for (uint32_t at : l.pending) patch(at, l.target);
  l.pending.clear();
}

void CodeBuilder::patch(uint32_t at, int64_t target) {
  // Offsets are relative to the instruction after the jump (opcodes.def).
  code_[at].sbx = static_cast<int32_t>(target - (static_cast<int64_t>(at) + 1));
}

void CodeBuilder::finish(FunctionProto& proto) {
  proto.code = std::move(code_);
  proto.lines = std::move(lines_);
  proto.cols = std::move(cols_);
  proto.consts = consts_.take();
  proto.hotcounts.assign(proto.code.size(), 0);
  proto.has_loops = false;
  for (const Instr& i : proto.code)
    proto.has_loops = proto.has_loops || i.op == Op::FORPREP || i.op == Op::ITERPREP || i.op == Op::LOOP;
}

}  // namespace tessera
