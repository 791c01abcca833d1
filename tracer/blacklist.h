// Blacklist: roots (loops and function entries) whose recordings keep
// aborting. Each abort makes the root wait longer before the interpreter
// reports it hot again (LuaJIT-style back-off: the hot threshold times
// 2^aborts, capped at what the counter holds); after `blacklist` aborts it
// is never recorded again. Without the back-off a loop that always aborts
// would be recorded every `hotloop` iterations, and recording is slow.
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

 private:
  struct Entry {
    RootKey root;
    uint32_t aborts;
  };

  Params p_;
  std::vector<Entry> entries_;  // few: only roots that aborted
};

}  // namespace tessera::jit
