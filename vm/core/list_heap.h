// ListHeap: the lists one VM has made, and the cycle collector over them.
//
// Reference counting frees everything but cycles, and only lists can form
// them (strings and tensors hold no values). So every list make_list makes
// while a VM runs joins that VM's heap (ListHeap::current(), set by the VM
// around its runs and calls), and when the lists made since the last
// collection and still alive (made less freed, as CPython counts: lists
// freed by their counts were no cycles) outnumber max(10 000, the lists
// alive after it, times up to 4 while collections find no cycles), collect()
// frees the lists no one outside them references, as CPython's collector
// does: gc_refs = refcount minus the references from other lists of the
// heap; a list with gc_refs > 0 is referenced from outside (a register, a
// global, a handle), and so is everything reachable from it; the rest is
// garbage, whose items are cleared, which frees it. Collection runs only
// where a list is made, a point where every live list is held by a Value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera {

struct ListObj;

class ListHeap {
 public:
  ListHeap() = default;
  // Frees the cycles left; lists still alive are detached (they outlive
  // the VM untracked).
  ~ListHeap();
  ListHeap(const ListHeap&) = delete;
  ListHeap& operator=(const ListHeap&) = delete;

  // The heap new lists join on this thread (null: none, untracked).
  static ListHeap*& current();

  void add(ListObj* l);
  void remove(ListObj* l);
  bool due() const { return made_since_ >= threshold_; }
  // Frees the unreachable cycles; returns how many lists it freed.
  size_t collect();

  struct Stats {
    uint64_t collections = 0;
    uint64_t lists_freed = 0;
    double ms = 0;
  };
  const Stats& stats() const { return stats_; }
  size_t live() const { return lists_.size(); }

  static constexpr size_t kMinThreshold = 10000;
  // The wait after a collection that freed fewer than 1 in kNoCyclesRatio
  // of the lists it looked at doubles, up to kMaxGrowth times the live
  // lists (collect()).
  static constexpr size_t kNoCyclesRatio = 100;
  static constexpr size_t kMaxGrowth = 4;

 private:
  // The lists, in a table rather than linked through the lists themselves:
  // a collection visits every list several times, and walking a table lets
  // the processor fetch many lists at once where a chain of pointers makes
  // it wait for each (union_find in the corpus: 450 000 live lists). A list
  // knows its place (ListObj::gc_index); removal moves the last one there.
  std::vector<ListObj*> lists_;
  size_t made_since_ = 0;
  size_t threshold_ = kMinThreshold;
  size_t growth_ = 1;  // the wait, in live lists (kMaxGrowth)
  bool collecting_ = false;
  Stats stats_;
};

// Makes `heap` current on this thread for a scope (a VM's run or call).
class ListHeapScope {
 public:
  explicit ListHeapScope(ListHeap* heap) : saved_(ListHeap::current()) { ListHeap::current() = heap; }
  ~ListHeapScope() { ListHeap::current() = saved_; }
  ListHeapScope(const ListHeapScope&) = delete;
  ListHeapScope& operator=(const ListHeapScope&) = delete;

 private:
  ListHeap* saved_;
};

}  // namespace tessera
