#include "tracer/blacklist.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace tessera::jit {

const Blacklist::Entry* Blacklist::find(const RootKey& root) const {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.root == root; });
  return it != entries_.end() ? &*it : nullptr;
}

Blacklist::Entry* Blacklist::find(const RootKey& root) {
  return const_cast<Entry*>(std::as_const(*this).find(root));
}

uint32_t Blacklist::aborts(const RootKey& root) const {
  const Entry* e = find(root);
  return e ? e->aborts : 0;
}

uint32_t Blacklist::retries(const RootKey& root) const {
  const Entry* e = find(root);
  return e ? e->round : 0;
}

bool Blacklist::contains(const RootKey& root) const { return aborts(root) >= p_.blacklist; }

void Blacklist::set_counter(const RootKey& root, uint64_t wait) const {
  // The loop counters are 16 bits wide, and the function counter is capped the same.
  wait = std::min<uint64_t>(std::numeric_limits<uint16_t>::max(), wait);
  FunctionProto& p = *root.proto;
  if (root.is_function()) p.entry_hotcount = static_cast<uint32_t>(wait);
  else if (*root.loop_pc < p.hotcounts.size()) p.hotcounts[*root.loop_pc] = static_cast<uint16_t>(wait);
}

bool Blacklist::aborted(const RootKey& root) {
  Entry* e = find(root);
  const uint32_t n = e ? ++e->aborts : entries_.emplace_back(Entry{root, 1}).aborts;
  if (!e) e = &entries_.back();
  // The next try waits twice as long as the last.
  const uint64_t threshold = root.is_function() ? p_.hotcall : p_.hotloop;
  set_counter(root, threshold << std::min<uint32_t>(n, 16));
  // Blacklisted now: the first time is the one reported (a retry that
  // aborts only starts a longer cool-down).
  if (n >= p_.blacklist) e->waited = 0;
  return n == p_.blacklist && e->round == 0;
}

bool Blacklist::refused(const RootKey& root) {
  Entry* e = find(root);
  if (!e || e->aborts < p_.blacklist) return false;
  set_counter(root, std::numeric_limits<uint64_t>::max());
  if (++e->waited < (uint64_t{kCooldownWaits} << std::min<uint32_t>(e->round, 32))) return false;
  ++e->round;
  e->waited = 0;
  e->aborts = p_.blacklist - 1;  // one recording; its abort blacklists the root again
  return true;
}

}  // namespace tessera::jit
