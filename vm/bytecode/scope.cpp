#include "vm/bytecode/scope.h"

namespace tessera {

void ScopeStack::close_block(uint32_t end_pc) {
  size_t start = block_starts_.back();
  block_starts_.pop_back();
  for (size_t i = start; i < visible_.size(); ++i) {
    auto& info = infos_[visible_[i].info];
    // LocalInfo ranges are inclusive; a local declared as the block's last
    // act has an empty range, recorded as just its start.
    info.end_pc = end_pc > info.start_pc ? end_pc - 1 : info.start_pc;
  }
  visible_.resize(start);
}

void ScopeStack::declare(const std::string& name, Reg reg, uint32_t start_pc) {
  infos_.push_back({reg, name, start_pc, start_pc});
  visible_.push_back({name, reg, infos_.size() - 1});
}

std::optional<Reg> ScopeStack::lookup(std::string_view name) const {
  for (auto it = visible_.rbegin(); it != visible_.rend(); ++it)
    if (it->name == name) return it->reg;
  return std::nullopt;
}

}  // namespace tessera
