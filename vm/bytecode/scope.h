// Block scopes of named locals within one function.
//
// A `let` declares a local in the innermost open block; lookup walks from
// the most recent declaration outwards, so a re-declaration in the same
// block, or one in an inner block, shadows the older one. Closing a block
// forgets its locals and records their live range (FunctionProto::locals).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vm/bytecode/bytecode.h"
#include "vm/bytecode/register_allocator.h"

namespace tessera {

class ScopeStack {
 public:
  explicit ScopeStack(std::vector<FunctionProto::LocalInfo>& infos) : infos_(infos) {}

  void open_block() { block_starts_.push_back(visible_.size()); }
  // Closes the innermost block at `end_pc` (the pc of the first instruction
  // after it); its locals' ranges end there.
  void close_block(uint32_t end_pc);

  // Makes `name` (already living in `reg`) visible from `start_pc` on.
  void declare(const std::string& name, Reg reg, uint32_t start_pc);

  std::optional<Reg> lookup(std::string_view name) const;

  // True when no block is open: the file level of <main>.
  bool at_top_level() const { return block_starts_.empty(); }

 private:
  struct Local {
    std::string name;
    Reg reg;
    size_t info;  // index into infos_
  };
  std::vector<FunctionProto::LocalInfo>& infos_;
  std::vector<Local> visible_;
  std::vector<size_t> block_starts_;  // visible_.size() when each block opened
};

}  // namespace tessera
