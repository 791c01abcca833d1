// Blacklist: roots (loops and function entries) whose recordings keep
// aborting. Each abort makes the root wait longer before the interpreter
// reports it hot again (LuaJIT-style back-off: the hot threshold times
// 2^aborts, capped at what the counter holds); after `blacklist` aborts it
// is blacklisted: not recorded, but not forever (a program's later phase may
// make it traceable): it is tried once more after a cool-down that doubles
// with each round. Without the back-off a loop that always aborts would be
// recorded every `hotloop` iterations, and recording is slow.
#pragma once

#include <cstdint>
#include <vector>

#include "tracer/root_key.h"

namespace tessera::jit {

class Blacklist {
 public:
  // The JIT parameters of the same names (runtime/jit_params.def).
  struct Params {
    uint32_t blacklist;  // aborts that blacklist a root (at least 1)
    uint32_t hotloop;    // the hot thresholds the back-off multiplies
    uint32_t hotcall;
  };
  explicit Blacklist(const Params& p) : p_(p) {}

  // Whether `root` is no longer recorded.
  bool contains(const RootKey& root) const;
  // Aborted recordings from `root` so far.
  uint32_t aborts(const RootKey& root) const;
  // A recording from `root` aborted: counts it and sets the root's hot
  // counter (FunctionProto::hotcounts or entry_hotcount) to the back-off.
  // The recording aborts after the interpreter has reset that counter to
  // the threshold, so the back-off sticks. True when this abort is the one
  // that blacklists the root.
  bool aborted(const RootKey& root);
  // A blacklisted root reported hot again (refused a recording): its counter
  // is set to the longest wait it holds (65 535 ticks), and after
  // kCooldownWaits << round such waits (about a million iterations of a loop
  // the first time) the root gets one more recording; if that aborts, the
  // next cool-down is twice as long. True when this refusal ends a cool-down.
  bool refused(const RootKey& root);
  static constexpr uint32_t kCooldownWaits = 16;
  // How many cool-downs have ended for `root` (retries given).
  uint32_t retries(const RootKey& root) const;

 private:
  struct Entry {
    RootKey root;
    uint32_t aborts;
    uint32_t round = 0;    // cool-downs ended
    uint64_t waited = 0;   // refusals in the current cool-down
  };
  const Entry* find(const RootKey& root) const;
  Entry* find(const RootKey& root);
  void set_counter(const RootKey& root, uint64_t wait) const;

  Params p_;
  std::vector<Entry> entries_;  // few: only roots that aborted
};

}  // namespace tessera::jit
