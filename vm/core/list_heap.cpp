#include "vm/core/list_heap.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "vm/core/value.h"

namespace tessera {

ListHeap*& ListHeap::current() {
  thread_local ListHeap* heap = nullptr;
  return heap;
}

ListHeap::~ListHeap() {
  // Cycles left behind go with the heap (its VM), not with the process.
  collect();
  for (ListObj* l : lists_) l->heap = nullptr;
  lists_.clear();
}

void ListHeap::add(ListObj* l) {
  lists_.push_back(l);  // first: if it throws, the list is not half joined
  l->heap = this;
  l->gc_index = lists_.size() - 1;
  ++made_since_;
}

void ListHeap::remove(ListObj* l) {
  ListObj* last = lists_.back();
  lists_[l->gc_index] = last;
  last->gc_index = l->gc_index;
  lists_.pop_back();
  l->heap = nullptr;
  // A list freed since the last collection was no cycle: the count is of
  // the lists made since then that are still alive.
  if (made_since_ > 0) --made_since_;
}

size_t ListHeap::collect() {
  if (collecting_) return 0;
  collecting_ = true;
  const size_t looked_at = live();
  const auto start = std::chrono::steady_clock::now();
  // 1. gc_refs: the references from outside the heap's lists.
  for (ListObj* l : lists_) l->gc_refs = l->refcount;
  for (ListObj* l : lists_)
    for (const Value& v : l->items)
      if (v.is_list() && v.as_list()->heap == this) --v.as_list()->gc_refs;
  // 2. What is referenced from outside, and all it reaches, is alive
  //    (gc_refs < 0 marks it).
  std::vector<ListObj*> work;
  for (ListObj* l : lists_)
    if (l->gc_refs > 0) {
      l->gc_refs = -1;
      work.push_back(l);
    }
  while (!work.empty()) {
    ListObj* l = work.back();
    work.pop_back();
    for (const Value& v : l->items) {
      if (!v.is_list()) continue;
      ListObj* c = v.as_list();
      if (c->heap == this && c->gc_refs >= 0) {
        c->gc_refs = -1;
        work.push_back(c);
      }
    }
  }
  // 3. The rest is garbage: hold each, clear their items (which drops the
  //    references among them), then let them go. (Freeing a list takes it
  //    out of lists_, so the garbage is gathered first.)
  std::vector<Value> garbage;
  for (ListObj* l : lists_)
    if (l->gc_refs >= 0) garbage.push_back(Value::borrow(l));
  for (Value& g : garbage) {
    std::vector<Value> items = std::move(g.as_list()->items);
    g.as_list()->items.clear();
    items.clear();  // strings, tensors and lists outside the garbage go their usual way
  }
  const size_t freed = garbage.size();
  garbage.clear();
  stats_.collections += 1;
  stats_.lists_freed += freed;
  stats_.ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  made_since_ = 0;
  // A collection that found (almost) no cycles makes the next one wait
  // longer, up to kMaxGrowth times the live lists: a program that keeps
  // many lists and makes no cycles (union_find in the corpus keeps 450 000
  // edge lists) pays a few collections, not one per doubling. One that
  // found cycles brings the wait back to the live count.
  growth_ = freed * kNoCyclesRatio < looked_at ? std::min(growth_ * 2, kMaxGrowth) : 1;
  threshold_ = std::max(kMinThreshold, live() * growth_);
  collecting_ = false;
  return freed;
}

}  // namespace tessera
