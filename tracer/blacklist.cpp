#include "tracer/blacklist.h"

#include <algorithm>
#include <limits>

namespace tessera::jit {

uint32_t Blacklist::aborts(const RootKey& root) const {
  for (const Entry& e : entries_)
    if (e.root == root) return e.aborts;
  return 0;
}

bool Blacklist::contains(const RootKey& root) const { return aborts(root) >= p_.blacklist; }

bool Blacklist::aborted(const RootKey& root) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.root == root; });
  const uint32_t n = it != entries_.end() ? ++it->aborts : entries_.emplace_back(Entry{root, 1}).aborts;
  // The next try waits twice as long as the last; the loop counters are 16
  // bits wide, and the function counter is capped the same.
  const uint64_t threshold = root.is_function() ? p_.hotcall : p_.hotloop;
  const uint64_t wait =
      std::min<uint64_t>(std::numeric_limits<uint16_t>::max(), threshold << std::min<uint32_t>(n, 16));
  FunctionProto& p = *root.proto;
  if (root.is_function()) p.entry_hotcount = static_cast<uint32_t>(wait);
  else if (*root.loop_pc < p.hotcounts.size()) p.hotcounts[*root.loop_pc] = static_cast<uint16_t>(wait);
  return n == p_.blacklist;
}

}  // namespace tessera::jit
