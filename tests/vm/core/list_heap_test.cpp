// The cycle collector (vm/core/list_heap.h): cycles no one references are
// freed, whatever a register, a global or a live list still reaches stays,
// and a collection comes by itself once enough lists were made.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "vm/core/list_heap.h"
#include "vm/core/value.h"

namespace tessera {
namespace {

struct HeapTest : ::testing::Test {
  ListHeap heap;
  ListHeapScope scope{&heap};
};

TEST_F(HeapTest, AnUnreferencedCycleIsFreed) {
  {
    Value a = make_list({Value::integer(1)});
    a.as_list()->items.push_back(a);  // a contains itself
    Value b = make_list();
    Value c = make_list({b});
    b.as_list()->items.push_back(c);  // b -> c -> b
  }
  EXPECT_EQ(heap.live(), 3u);  // reference counting alone keeps them
  EXPECT_EQ(heap.collect(), 3u);
  EXPECT_EQ(heap.live(), 0u);
  EXPECT_EQ(heap.stats().collections, 1u);
  EXPECT_EQ(heap.stats().lists_freed, 3u);
}

TEST_F(HeapTest, WhatIsReferencedFromOutsideStays) {
  Value held = make_list();
  {
    Value inner = make_list({held});
    held.as_list()->items.push_back(inner);  // held <-> inner, and `held` is a register
  }
  Value s = make_str("kept");
  held.as_list()->items.push_back(s);
  EXPECT_EQ(heap.collect(), 0u);
  ASSERT_EQ(held.as_list()->items.size(), 2u);
  EXPECT_TRUE(held.as_list()->items[0].is_list());
  EXPECT_EQ(held.as_list()->items[1].as_str()->view(), "kept");
  // A garbage cycle that points at a live list leaves it alone.
  {
    Value g = make_list({held});
    g.as_list()->items.push_back(g);
  }
  EXPECT_EQ(heap.collect(), 1u);
  EXPECT_EQ(held.as_list()->refcount, 2u);  // `held` and `inner`
  held.as_list()->items.clear();            // break the cycle by hand: both go
  EXPECT_EQ(heap.live(), 1u);
}

TEST_F(HeapTest, ACollectionComesWhenEnoughListsWereMade) {
  for (size_t i = 0; i < 3 * ListHeap::kMinThreshold; ++i) {
    Value l = make_list({Value::integer(static_cast<int64_t>(i))});
    l.as_list()->items.push_back(l);
  }
  EXPECT_GE(heap.stats().collections, 2u);
  EXPECT_LE(heap.live(), ListHeap::kMinThreshold);
}

// Only lists that stay alive can be cyclic garbage: lists freed by their
// reference counts (a tree built and dropped, a temporary pair) do not
// bring a collection on, as CPython counts allocations less deallocations.
TEST_F(HeapTest, ListsThatDieYoungDoNotBringACollectionOn) {
  for (size_t i = 0; i < 5 * ListHeap::kMinThreshold; ++i) {
    Value l = make_list({Value::integer(static_cast<int64_t>(i))});
    l.as_list()->items.push_back(make_list({}));
  }
  EXPECT_EQ(heap.stats().collections, 0u);
  EXPECT_EQ(heap.live(), 0u);
}

// A program that keeps many lists and makes no cycles: each collection
// that finds none doubles the wait (up to ListHeap::kMaxGrowth times the
// live lists), and one that finds cycles brings it back to the live count.
TEST_F(HeapTest, ACollectionThatFindsNoCyclesMakesTheNextOneWaitLonger) {
  std::vector<Value> kept;
  auto make = [&](size_t n) {
    for (size_t i = 0; i < n; ++i) kept.push_back(make_list({Value::integer(1)}));
  };
  make(ListHeap::kMinThreshold + 1);  // the last make collects first: 10 000 live, no cycle
  EXPECT_EQ(heap.stats().collections, 1u);
  make(2 * ListHeap::kMinThreshold - 1);  // twice the live lists, less one: not yet
  EXPECT_EQ(heap.stats().collections, 1u);
  make(1);
  EXPECT_EQ(heap.stats().collections, 2u);
  EXPECT_EQ(heap.stats().lists_freed, 0u);
  // Cycles found: the wait is the live count again.
  for (int i = 0; i < 1000; ++i) {
    Value c = make_list();
    c.as_list()->items.push_back(c);
  }
  EXPECT_EQ(heap.collect(), 1000u);
  const size_t live = heap.live();
  make(live);  // as many as are live: the next make collects
  EXPECT_EQ(heap.stats().collections, 3u);
  make(1);
  EXPECT_EQ(heap.stats().collections, 4u);
}

TEST(ListHeap, ListsOutsideAnyHeapAreNotTracked) {
  ASSERT_EQ(ListHeap::current(), nullptr);
  Value l = make_list();
  EXPECT_EQ(l.as_list()->heap, nullptr);
}

TEST(ListHeap, TheCyclesLeftGoWithTheHeap) {
  auto heap = std::make_unique<ListHeap>();
  {
    ListHeapScope scope(heap.get());
    Value l = make_list();
    l.as_list()->items.push_back(l);
  }
  EXPECT_EQ(heap->live(), 1u);
  heap.reset();  // LeakSanitizer would report the cycle otherwise
}

TEST(ListHeap, ListsThatOutliveTheirHeapAreDetached) {
  Value survivor;
  {
    ListHeap heap;
    ListHeapScope scope(&heap);
    survivor = make_list({Value::integer(7)});
    EXPECT_EQ(survivor.as_list()->heap, &heap);
  }
  EXPECT_EQ(survivor.as_list()->heap, nullptr);
  survivor = Value();  // freed without touching the heap that is gone
}

}  // namespace
}  // namespace tessera
