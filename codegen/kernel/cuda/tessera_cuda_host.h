// Host emulation of the CUDA subset that generated kernels use
// (tessera_cuda.h includes this when TSR_HOST_EMULATION is defined), so
// that the generated CUDA C++ is compiled by the host's C++ compiler and
// run on machines without a GPU.
//
// A block's threads are fibers (Boost.Context) run on the calling thread:
// each runs until it reaches a barrier (tsr_sync) or returns, then the
// next; when every thread of the block waits at the barrier, they all go
// on. Warp shuffles and votes are exchanges through the block's scratch
// area between two barriers (generated code calls them with every thread
// of the block, as it calls tsr_sync). Blocks run one after the other, each
// with its own dynamic shared memory. A barrier that some threads reach
// while others have returned is a divergence a GPU would hang or misbehave
// on: launch() throws std::logic_error.
//
// The tensor-core operations: mma and ldmatrix are warp-collective like the
// shuffles (each lane puts its operands in the exchange area, a barrier,
// each lane computes its result from its warp's 32 lanes by the PTX ISA's
// fragment layouts, a barrier). mma sums in f32 over k in order, starting
// from C (the products of halves are exact in f32); a GPU's order differs,
// so results agree within f32 rounding, not bit for bit. cp.async is
// deferred: the copy is queued on the calling thread (its source read then),
// commit closes a group, and wait<N> lands all of the thread's committed
// groups but the N most recent; so a read of shared memory without the
// right wait sees the old bytes, as it may on a GPU. Copies still pending
// when a thread returns are dropped (a kernel must wait for its copies). A
// misuse a GPU would fault or misbehave on (a partial warp at mma/ldmatrix,
// an address outside shared memory or misaligned) makes launch() throw
// std::logic_error after the fibers reach their next barrier.
//
// A named barrier (bar.sync id, count) is polled like an mbarrier: the
// consumers of a warp-specialized kernel sync among themselves while its
// producer warp polls its barriers or has returned.
//
// Hopper. A thread polling (an mbarrier's phase, a warpgroup's rendezvous)
// yields to the others without being at a barrier; the polls go round
// until none is left, and a round in which no poll gets on (nothing they
// wait for changed) is a hang on a GPU: launch() throws. wgmma is
// warpgroup-collective (128 threads from a multiple of 128, rendezvous
// among them only; the same descriptors from all, a wgmma.fence since the
// thread's last wait): each thread decodes A's and B's elements from the
// descriptors as the PTX ISA lays them out (core matrices, LBO/SBO,
// K-major or MN-major, the 32/64/128-byte swizzle on the shared-memory
// address) and computes its accumulator fragment at issue, from the
// accumulators as its earlier wgmma leave them; the results land at
// wgmma.wait_group, so a read of d before the wait sees the old values. An
// mbarrier's state (expected arrivals, transaction bytes, phase) is kept
// aside, by its shared-memory offset. A TMA 2-D load reads its box at issue
// (zeros outside the tensor) and lands it, swizzled as the map says, when a
// thread next polls its mbarrier, completing the bytes there. Tensor maps are
// the emulation's own encoding (tsr_emu_encode_tensor_map_2d, standing in for
// cuTensorMapEncodeTiled). setmaxnreg and the proxy fences do nothing.
#ifndef TESSERA_CUDA_HOST_H
#define TESSERA_CUDA_HOST_H

#include <boost/context/fiber.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#define TSR_FN static inline
#define TSR_KERNEL extern "C"
#define TSR_BOUNDS(n)

typedef long long tsr_i64;

namespace tsr_emu {

struct Block;

// A cp.async not landed yet: where it goes, and the 16 bytes it writes.
struct AsyncCopy {
  unsigned char* dst;
  unsigned char bytes[16];
};

// A thread's asynchronous operations in commit groups (cp.async, wgmma).
template <class Op>
struct Groups {
  std::vector<Op> open;                 // since the last commit
  std::deque<std::vector<Op>> committed;  // oldest first
  void commit() {
    committed.push_back(std::move(open));
    open.clear();
  }
  // Lands (f(op)) every committed group but the `pending` most recent.
  template <class F>
  void land(std::size_t pending, F f) {
    for (; committed.size() > pending; committed.pop_front())
      for (const Op& op : committed.front()) f(op);
  }
  void clear() {
    open.clear();
    committed.clear();
  }
};

// A wgmma's accumulators, applied to d at the wait.
struct WgmmaResult {
  float* d;
  std::vector<float> v;
};

struct Thread {
  int tid = 0;
  Block* block = nullptr;
  boost::context::fiber scheduler;  // where tsr_sync returns to
  bool waiting = false;             // at a barrier
  bool spinning = false;            // polling an mbarrier or a warpgroup rendezvous
  Groups<AsyncCopy> copies;         // cp.async
  Groups<WgmmaResult> wgmma;
  bool wgmma_fenced = false;  // a wgmma.fence since the last wait
};

// An mbarrier (its state kept here, by its offset in shared memory): the
// arrivals still expected in the current phase, the transaction bytes
// (expected minus completed), the phases completed, the TMA copies in flight.
struct Mbarrier {
  unsigned count = 0, pending = 0;
  long long tx = 0;
  unsigned phase = 0;
  std::vector<AsyncCopy> inflight;
  long long inflight_bytes = 0;
};

// Exchange bytes per thread, room for any warp-collective operation's
// operands (mma's A and B fragments take 24).
constexpr std::size_t kSlot = 64;

struct Block {
  tsr_i64 id = 0;
  int threads = 0;
  std::vector<unsigned char> shared;    // dynamic shared memory
  std::vector<unsigned char> exchange;  // kSlot bytes per thread for warp-collective operations
  std::string fault;                    // the first misuse; launch() throws it
  std::map<std::size_t, Mbarrier> mbarriers;  // by offset in `shared`
  std::vector<unsigned> wg_arrived, wg_generation;  // warpgroup rendezvous
  struct Named {
    int arrived = 0;
    unsigned long long generation = 0;
  };
  std::map<int, Named> named;  // named barriers (bar.sync id, count) by id
  unsigned long long progress = 0;  // bumped by each step a spinning thread may wait for
};

inline unsigned char* slot(Block* b, int tid) { return &b->exchange[static_cast<std::size_t>(tid) * kSlot]; }

inline thread_local Thread* current = nullptr;

inline void sync() {
  Thread* t = current;
  t->waiting = true;
  t->scheduler = std::move(t->scheduler).resume();
  current = t;
}

// Yields while polling (an mbarrier's phase, a warpgroup's rendezvous): the
// other threads run on, up to their barriers or polls.
inline void spin() {
  Thread* t = current;
  t->spinning = true;
  t->scheduler = std::move(t->scheduler).resume();
  current = t;
}

// bar.sync id, count: a barrier among `count` threads (a multiple of 32),
// not the block's: the threads poll until `count` arrived (a warp-
// specialized kernel's consumers, while its producer warp goes on).
inline void named_sync(int id, int count) {
  Thread* t = current;
  Block* b = t->block;
  if (id < 1 || id > 15 || count <= 0 || count % 32 || count > b->threads) {
    b->fault = b->fault.empty() ? "bar.sync " + std::to_string(id) + ", " + std::to_string(count) +
                                      ": an id of 1..15 and a count that is a multiple of 32 up to the block's threads"
                                : b->fault;
    return;
  }
  Block::Named& n = b->named[id];
  const unsigned long long generation = n.generation;
  ++b->progress;
  if (++n.arrived == count) {
    n.arrived = 0;
    ++n.generation;
    return;
  }
  while (n.generation == generation) spin();
}

// Stacks for a block's fibers, carved from one allocation per launch.
struct SlabStack {
  unsigned char* base;
  std::size_t size;
  boost::context::stack_context allocate() {
    boost::context::stack_context c;
    c.size = size;
    c.sp = base + size;
    return c;
  }
  void deallocate(boost::context::stack_context&) noexcept {}
};

template <class Body>
void launch(tsr_i64 programs, int threads, tsr_i64 shared_bytes, Body body) {
  constexpr std::size_t kStack = 128 * 1024;
  std::vector<unsigned char> stacks(static_cast<std::size_t>(threads) * kStack);
  Block blk;
  blk.threads = threads;
  blk.shared.assign(static_cast<std::size_t>(shared_bytes) + 16, 0);
  blk.exchange.assign(static_cast<std::size_t>(threads) * kSlot, 0);
  std::vector<Thread> ts(static_cast<std::size_t>(threads));
  for (tsr_i64 b = 0; b < programs; ++b) {
    blk.id = b;
    blk.mbarriers.clear();
    blk.named.clear();
    blk.wg_arrived.assign(static_cast<std::size_t>(threads) / 128 + 1, 0);
    blk.wg_generation.assign(blk.wg_arrived.size(), 0);
    std::vector<boost::context::fiber> fibers;
    fibers.reserve(ts.size());
    for (int i = 0; i < threads; ++i) {
      Thread* t = &ts[static_cast<std::size_t>(i)];
      t->tid = i;
      t->block = &blk;
      t->waiting = t->spinning = t->wgmma_fenced = false;
      t->copies.clear();  // a previous block's copies (and wgmma), never waited for, never land
      t->wgmma.clear();
      SlabStack st{stacks.data() + static_cast<std::size_t>(i) * kStack, kStack};
      fibers.emplace_back(std::allocator_arg, st, [t, &body](boost::context::fiber&& sched) {
        t->scheduler = std::move(sched);
        current = t;
        body();
        return std::move(t->scheduler);
      });
    }
    const auto resume = [&](int i) {
      current = &ts[static_cast<std::size_t>(i)];
      auto& f = fibers[static_cast<std::size_t>(i)];
      f = std::move(f).resume();
      current = nullptr;
    };
    const auto check = [&] {
      if (!blk.fault.empty()) throw std::logic_error("tsr_emu: block " + std::to_string(b) + ": " + blk.fault);
    };
    for (;;) {
      int running = 0, waiting = 0;
      for (int i = 0; i < threads; ++i) {
        if (!fibers[static_cast<std::size_t>(i)]) continue;
        ts[static_cast<std::size_t>(i)].waiting = false;
        resume(i);
      }
      check();
      // Threads polling run again until none polls; a pass in which none
      // gets on (nothing they poll changed) never ends on a GPU either.
      for (;;) {
        const unsigned long long before = blk.progress;
        int spun = 0, still = 0;
        for (int i = 0; i < threads; ++i) {
          Thread& t = ts[static_cast<std::size_t>(i)];
          if (!t.spinning || !fibers[static_cast<std::size_t>(i)]) continue;
          t.spinning = false;
          ++spun;
          resume(i);
          if (fibers[static_cast<std::size_t>(i)] && t.spinning) ++still;
        }
        check();
        if (spun == 0) break;
        if (still == spun && blk.progress == before)
          throw std::logic_error("tsr_emu: block " + std::to_string(b) + ": " + std::to_string(still) +
                                 " threads wait on an mbarrier phase or a warpgroup operation that never completes");
      }
      for (int i = 0; i < threads; ++i)
        if (fibers[static_cast<std::size_t>(i)]) ++running, waiting += ts[static_cast<std::size_t>(i)].waiting ? 1 : 0;
      if (running == 0) break;
      if (running != threads)
        throw std::logic_error("tsr_emu: block " + std::to_string(b) + ": " + std::to_string(threads - running) +
                               " threads returned while " + std::to_string(waiting) + " wait at a barrier");
    }
  }
}

// An exchange among the threads of a warp through the block's scratch area.
template <class T>
T exchange_xor(T v, int lane_mask) {
  Thread* t = current;
  Block* b = t->block;
  static_assert(sizeof(T) <= 8, "shuffles move up to 8 bytes");
  std::memcpy(slot(b, t->tid), &v, sizeof(T));
  sync();
  const int src = t->tid ^ lane_mask;
  T r = v;  // a lane outside the block keeps its own value
  if (src < b->threads && (src / 32) == (t->tid / 32)) std::memcpy(&r, slot(b, src), sizeof(T));
  sync();
  return r;
}

inline int vote(bool p, bool all) {
  Thread* t = current;
  Block* b = t->block;
  *slot(b, t->tid) = p ? 1 : 0;
  sync();
  const int first = t->tid / 32 * 32;
  bool any = false, every = true;
  for (int i = first; i < first + 32 && i < b->threads; ++i) {
    const bool q = *slot(b, i) != 0;
    any = any || q;
    every = every && q;
  }
  sync();
  return all ? every : any;
}

inline void fail(Block* b, const std::string& what) {
  if (b->fault.empty()) b->fault = what;
}

// The first lane of the calling thread's warp, or -1 (and a fault) where the
// warp is not whole: a GPU's missing lanes would hand over garbage.
inline int full_warp(const Thread* t, const char* op) {
  const int first = t->tid / 32 * 32;
  if (first + 32 <= t->block->threads) return first;
  fail(t->block, std::string(op) + " in a warp of " + std::to_string(t->block->threads - first) + " threads");
  return -1;
}

// The offset of p in the block's shared memory (its address in the shared
// window), or -1 where [p, p + bytes) is not in it.
inline long long shared_offset(const Block* b, const void* p, std::size_t bytes) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p), base = reinterpret_cast<std::uintptr_t>(b->shared.data());
  if (a < base || a + bytes > base + b->shared.size()) return -1;
  return static_cast<long long>(a - base);
}

// Whether [p, p + 16) lies in the block's shared memory, 16-byte aligned.
inline bool shared_16(const Block* b, const void* p) {
  const long long off = shared_offset(b, p, 16);
  return off >= 0 && off % 16 == 0;
}

// mma.m16n8k16.row.col with f32 accumulators; `to_f32` converts a half's bits.
template <class ToF32>
void mma_m16n8k16(float d[4], const unsigned a[4], const unsigned b[2], const float c[4], ToF32 to_f32) {
  Thread* t = current;
  Block* blk = t->block;
  std::memcpy(slot(blk, t->tid), a, 16);
  std::memcpy(slot(blk, t->tid) + 16, b, 8);
  const int first = full_warp(t, "mma");
  sync();
  // The half at bit 16 * (e % 2) of b32 register e / 2 of lane `lane`.
  const auto half = [&](int lane, int reg_off, int e) {
    unsigned w;
    std::memcpy(&w, slot(blk, first + lane) + reg_off + 4 * (e / 2), 4);
    return to_f32(static_cast<unsigned short>(e % 2 ? w >> 16 : w & 0xffffu));
  };
  float r[4] = {0, 0, 0, 0};
  if (first >= 0) {
    const int lane = t->tid - first;
    for (int i = 0; i < 4; ++i) {
      const int row = lane / 4 + 8 * (i / 2), col = 2 * (lane % 4) + i % 2;
      float acc = c[i];
      for (int k = 0; k < 16; ++k) {
        // A[row][k]: lane 4 (row % 8) + (k % 8) / 2, half (k % 2) + 2 (row / 8) + 4 (k / 8).
        const float x = half(4 * (row % 8) + (k % 8) / 2, 0, k % 2 + 2 * (row / 8) + 4 * (k / 8));
        // B[k][col]: lane 4 col + (k % 8) / 2, half (k % 2) + 2 (k / 8).
        const float y = half(4 * col + (k % 8) / 2, 16, k % 2 + 2 * (k / 8));
        acc += x * y;
      }
      r[i] = acc;
    }
  }
  sync();  // d may be c, and other lanes read this lane's slot until here
  std::memcpy(d, r, 16);
}

// The row address lane `src` passed to ldmatrix, or nullptr (and a fault).
inline const unsigned char* ldmatrix_row(Block* b, int src) {
  const unsigned char* p;
  std::memcpy(&p, slot(b, src), sizeof p);
  if (shared_16(b, p)) return p;
  fail(b, "ldmatrix: lane " + std::to_string(src % 32) + "'s row is not 16 aligned bytes of shared memory");
  return nullptr;
}

template <int kMatrices, bool kTrans>
void ldmatrix(unsigned* r, const void* row) {
  Thread* t = current;
  Block* blk = t->block;
  std::memcpy(slot(blk, t->tid), &row, sizeof row);
  const int first = full_warp(t, "ldmatrix");
  sync();
  unsigned out[kMatrices] = {};
  if (first >= 0) {
    const int lane = t->tid - first;
    for (int i = 0; i < kMatrices; ++i) {
      unsigned short h[2] = {0, 0};
      for (int j = 0; j < 2; ++j) {
        // Element (l / 4, 2 (l % 4) + j) of matrix i, or of its transpose.
        const int mrow = kTrans ? 2 * (lane % 4) + j : lane / 4, mcol = kTrans ? lane / 4 : 2 * (lane % 4) + j;
        if (const unsigned char* p = ldmatrix_row(blk, first + 8 * i + mrow)) std::memcpy(&h[j], p + 2 * mcol, 2);
      }
      out[i] = static_cast<unsigned>(h[0]) | static_cast<unsigned>(h[1]) << 16;
    }
  }
  sync();
  std::memcpy(r, out, sizeof out);
}

inline void cp_async16(void* smem, const void* gmem, int src_bytes) {
  Thread* t = current;
  if (!shared_16(t->block, smem) || reinterpret_cast<std::uintptr_t>(gmem) % 16 != 0 || src_bytes < 0 ||
      src_bytes > 16) {
    fail(t->block, "cp.async: thread " + std::to_string(t->tid) +
                       ": the destination is not 16 aligned bytes of shared memory, the source not 16-byte "
                       "aligned, or src_bytes outside 0..16");
    return;
  }
  AsyncCopy c{static_cast<unsigned char*>(smem), {}};
  std::memcpy(c.bytes, gmem, static_cast<std::size_t>(src_bytes));
  t->copies.open.push_back(c);
}

inline void cp_async_wait(std::size_t pending) {
  current->copies.land(pending, [](const AsyncCopy& c) { std::memcpy(c.dst, c.bytes, 16); });
}


// ---------------------------------------------------------------- Hopper

// The address bits a swizzle of `bytes` (0, 32, 64, 128) exchanges: the
// 16-byte chunk bits [4, 4 + k) XOR bits [7, 7 + k).
inline std::size_t swizzle(std::size_t addr, unsigned bytes) {
  const std::size_t mask = bytes / 16 - 1;  // 7, 3, 1, (0: none)
  return bytes ? addr ^ (((addr >> 7) & mask) << 4) : addr;
}

// Rendezvous of the calling thread's warpgroup (first thread `first`).
inline void warpgroup_sync(int first) {
  Block* b = current->block;
  const std::size_t g = static_cast<std::size_t>(first / 128);
  const unsigned generation = b->wg_generation[g];
  ++b->progress;
  if (++b->wg_arrived[g] == 128) {
    b->wg_arrived[g] = 0;
    ++b->wg_generation[g];
    return;
  }
  while (b->wg_generation[g] == generation) spin();
}

// The shared address a descriptor starts at (tsr_wgmma_desc encodes it),
// with a fault where the start or the offsets are out of range.
inline unsigned wgmma_desc_start(const void* smem, unsigned lbo, unsigned sbo, int swizzle_bytes) {
  Thread* t = current;
  long long off = shared_offset(t->block, smem, 16);
  if (off < 0 || off % 16 || lbo % 16 || sbo % 16 || lbo >= (1u << 18) || sbo >= (1u << 18) ||
      (swizzle_bytes != 0 && swizzle_bytes != 32 && swizzle_bytes != 64 && swizzle_bytes != 128)) {
    fail(t->block, "tsr_wgmma_desc: thread " + std::to_string(t->tid) +
                       ": the start is not 16 aligned bytes of shared memory, LBO or SBO no multiple of 16 "
                       "below 256 KiB, or a swizzle other than 0, 32, 64, 128 bytes");
    if (off < 0) off = 0x3fff0;  // past any block's shared memory
  }
  return static_cast<unsigned>(off);
}

// The shared-memory offset of element (mn, k) (16-bit elements) of the
// operand `desc` describes, K-major or MN-major (tsr_wgmma_desc's layouts).
inline std::size_t wgmma_element(unsigned long long desc, bool mn_major, int mn, int k) {
  const std::size_t start = (desc & 0x3fff) << 4, lbo = ((desc >> 16) & 0x3fff) << 4,
                    sbo = ((desc >> 32) & 0x3fff) << 4;
  const unsigned mode = static_cast<unsigned>(desc >> 62), w = mode == 1 ? 128 : mode == 2 ? 64 : mode == 3 ? 32 : 0;
  const std::size_t m = static_cast<std::size_t>(mn), kk = static_cast<std::size_t>(k);
  std::size_t off;
  if (!mn_major) off = w ? m % 8 * w + m / 8 * sbo + kk * 2 : m % 8 * 16 + m / 8 * sbo + kk % 8 * 2 + kk / 8 * lbo;
  else off = w ? m % (w / 2) * 2 + m / (w / 2) * lbo + kk % 8 * w + kk / 8 * sbo
               : m % 8 * 2 + m / 8 * sbo + kk % 8 * 16 + kk / 8 * lbo;
  return swizzle(start + off, w);
}

// What a thread hands its warpgroup at a wgmma: all 128 must agree.
struct WgmmaIssue {
  unsigned long long a, b;
  int scale_d, shape;
};

// The warpgroup's first thread, or -1 (and a fault) where it is not whole.
inline int full_warpgroup(const Thread* t, const char* op) {
  const int first = t->tid / 128 * 128;
  if (first + 128 <= t->block->threads) return first;
  fail(t->block, std::string(op) + " in a warpgroup of " + std::to_string(t->block->threads - first) + " threads");
  return -1;
}

// wgmma.mma_async.m64nNk16.f32 with A and B from shared memory: computed at
// issue from the accumulators as the thread's earlier wgmma leave them,
// landed in d at the wait.
template <int N, bool kTransA, bool kTransB, class ToF32>
void wgmma(float* d, unsigned long long desc_a, unsigned long long desc_b, int scale_d, ToF32 to_f32) {
  static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma takes N = 8..256, a multiple of 8");
  Thread* t = current;
  Block* blk = t->block;
  const int first = full_warpgroup(t, "wgmma");
  if (first < 0) return;
  if (!t->wgmma_fenced)
    fail(blk, "wgmma: thread " + std::to_string(t->tid) + " issues wgmma without a wgmma.fence since its last wait");
  const WgmmaIssue mine{desc_a, desc_b, scale_d != 0, N | kTransA << 16 | kTransB << 17};
  std::memcpy(slot(blk, t->tid), &mine, sizeof mine);
  warpgroup_sync(first);
  for (int i = first; i < first + 128; ++i)
    if (std::memcmp(slot(blk, i), &mine, sizeof mine) != 0) {
      fail(blk, "wgmma: threads " + std::to_string(t->tid) + " and " + std::to_string(i) +
                    " of a warpgroup pass different descriptors, scale_d or shapes");
      break;
    }
  warpgroup_sync(first);  // every slot read
  // A 16-bit element of an operand, 0 (and a fault) outside shared memory.
  bool outside = false;
  const auto element = [&](unsigned long long desc, bool mn_major, int mn, int k) {
    const std::size_t off = wgmma_element(desc, mn_major, mn, k);
    if (off + 2 > blk->shared.size() || ((desc >> 49) & 7) != 0) {
      outside = true;
      return 0.0f;
    }
    unsigned short h;
    std::memcpy(&h, &blk->shared[off], 2);
    return static_cast<float>(to_f32(h));
  };
  const int w = (t->tid - first) / 32, lane = t->tid % 32;
  float a[2][16];
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 16; ++k) a[h][k] = element(desc_a, kTransA, 16 * w + lane / 4 + 8 * h, k);
  WgmmaResult r{d, std::vector<float>(N / 2)};
  for (int i = 0; i < N / 2; ++i) {
    const int col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
    // The accumulator as this thread's last wgmma on it leaves it.
    float acc = d[i];
    bool found = false;
    for (auto g = t->wgmma.committed.rbegin(); !found && g != t->wgmma.committed.rend(); ++g)
      for (auto& p : *g)
        if (d + i >= p.d && d + i < p.d + p.v.size()) acc = p.v[static_cast<std::size_t>(d + i - p.d)], found = true;
    for (auto& p : t->wgmma.open)
      if (d + i >= p.d && d + i < p.d + p.v.size()) acc = p.v[static_cast<std::size_t>(d + i - p.d)];
    acc = scale_d ? acc : 0.0f;
    for (int k = 0; k < 16; ++k) acc += a[(i / 2) % 2][k] * element(desc_b, kTransB, col, k);
    r.v[static_cast<std::size_t>(i)] = acc;
  }
  if (outside)
    fail(blk, "wgmma: thread " + std::to_string(t->tid) +
                  ": an operand's descriptor reaches past the block's shared memory (or sets the base offset)");
  t->wgmma.open.push_back(std::move(r));
}

inline void wgmma_wait(std::size_t pending) {
  Thread* t = current;
  t->wgmma.land(pending, [](const WgmmaResult& r) { std::memcpy(r.d, r.v.data(), r.v.size() * sizeof(float)); });
  t->wgmma_fenced = false;
}

// The emulation's tensor map (in tsr_tensor_map's 128 bytes): a 2-D tensor
// of `elem`-byte elements, dims[0] contiguous, rows `stride` bytes apart,
// read in boxes of box[0] x box[1] elements, written swizzled by `swizzle` bytes.
struct TensorMap2d {
  unsigned magic, elem, swizzle, box[2];
  unsigned long long dims[2], stride;
  const unsigned char* base;
};
constexpr unsigned kTensorMapMagic = 0x54534d32u;  // "TSM2"

// The barrier at `bar`, or nullptr (and a fault) where none was initialized there.
inline Mbarrier* mbarrier(const void* bar, const char* op) {
  Thread* t = current;
  const long long off = shared_offset(t->block, bar, 8);
  auto it = off < 0 || off % 8 ? t->block->mbarriers.end() : t->block->mbarriers.find(static_cast<std::size_t>(off));
  if (it != t->block->mbarriers.end()) return &it->second;
  fail(t->block, std::string(op) + ": thread " + std::to_string(t->tid) + ": no initialized mbarrier there");
  return nullptr;
}

inline void mbar_init(void* bar, unsigned count) {
  Thread* t = current;
  const long long off = shared_offset(t->block, bar, 8);
  if (off < 0 || off % 8 || count == 0) {
    fail(t->block, "mbarrier.init: thread " + std::to_string(t->tid) +
                       ": not 8 aligned bytes of shared memory, or a count of 0");
    return;
  }
  Mbarrier m;
  m.count = m.pending = count;
  t->block->mbarriers[static_cast<std::size_t>(off)] = m;
  ++t->block->progress;
}

// Arrivals and transaction bytes; the phase completes when both are done.
inline void mbar_update(Mbarrier* m, unsigned arrivals, long long expect_tx, long long complete_tx) {
  Block* b = current->block;
  ++b->progress;
  if (arrivals > m->pending) {
    fail(b, "mbarrier: more arrivals than the phase expects");
    return;
  }
  m->pending -= arrivals;
  m->tx += expect_tx - complete_tx;
  if (m->pending == 0 && m->tx == 0) ++m->phase, m->pending = m->count;
}

inline void mbar_arrive(void* bar, long long expect_tx) {
  if (Mbarrier* m = mbarrier(bar, "mbarrier.arrive")) mbar_update(m, 1, expect_tx, 0);
}

// Lands the barrier's TMA copies, then whether the phase of that parity is over.
inline bool mbar_try_wait(void* bar, unsigned parity) {
  Mbarrier* m = mbarrier(bar, "mbarrier.try_wait");
  if (!m) return true;  // faulted: go on to the next barrier, where launch() throws
  if (!m->inflight.empty()) {
    for (const AsyncCopy& c : m->inflight) std::memcpy(c.dst, c.bytes, 16);
    m->inflight.clear();
    const long long bytes = m->inflight_bytes;
    m->inflight_bytes = 0;
    mbar_update(m, 0, 0, bytes);
  }
  const bool done = (m->phase & 1u) != (parity & 1u);
  if (done) ++current->block->progress;
  return done;
}

inline void mbar_wait(void* bar, unsigned parity) {
  while (!mbar_try_wait(bar, parity)) spin();
}

// cp.async.bulk.tensor.2d ... .mbarrier::complete_tx::bytes: the box read
// now (zeros outside the tensor), written to shared memory when a thread
// next polls the barrier (so a read before the wait sees the old bytes).
inline void tma_load_2d(void* smem, const void* map_bytes, int c0, int c1, void* bar) {
  Thread* t = current;
  Block* blk = t->block;
  TensorMap2d map;
  std::memcpy(&map, map_bytes, sizeof map);
  if (map.magic != kTensorMapMagic) {
    fail(blk, "tma: thread " + std::to_string(t->tid) + ": not a tensor map (tsr_emu_encode_tensor_map_2d)");
    return;
  }
  const std::size_t row = std::size_t{map.box[0]} * map.elem, bytes = row * map.box[1];
  const long long off = shared_offset(blk, smem, bytes);
  if (off < 0 || off % 128) {
    fail(blk, "tma: thread " + std::to_string(t->tid) + ": the box is not 128-byte aligned shared memory");
    return;
  }
  Mbarrier* m = mbarrier(bar, "tma");
  if (!m) return;
  std::vector<unsigned char> box(bytes, 0);
  for (unsigned y = 0; y < map.box[1]; ++y)
    for (unsigned x = 0; x < map.box[0]; ++x) {
      const long long gx = static_cast<long long>(c0) + x, gy = static_cast<long long>(c1) + y;
      if (gx < 0 || gy < 0 || static_cast<unsigned long long>(gx) >= map.dims[0] ||
          static_cast<unsigned long long>(gy) >= map.dims[1])
        continue;
      std::memcpy(&box[y * row + x * map.elem],
                  map.base + static_cast<std::size_t>(gy) * map.stride + static_cast<std::size_t>(gx) * map.elem,
                  map.elem);
    }
  for (std::size_t i = 0; i < bytes; i += 16) {
    AsyncCopy c{&blk->shared[swizzle(static_cast<std::size_t>(off) + i, map.swizzle)], {}};
    std::memcpy(c.bytes, &box[i], 16);
    m->inflight.push_back(c);
  }
  m->inflight_bytes += static_cast<long long>(bytes);
}

}  // namespace tsr_emu

// The emulation's tsr_tensor_map, as cuTensorMapEncodeTiled's on a GPU.
struct alignas(64) tsr_tensor_map {
  unsigned char opaque[128];
};
#define TSR_GRID_CONST const
// Encodes a 2-D tiled tensor map (cuTensorMapEncodeTiled's checks: base
// 16-byte aligned, row stride a multiple of 16, box dims 1..256 with
// box0 x elem a multiple of 16 bytes, and with a swizzle at most its bytes).
// dim0 is the contiguous dimension. False where an argument is out of range.
inline bool tsr_emu_encode_tensor_map_2d(tsr_tensor_map* out, const void* base, unsigned elem_bytes,
                                         unsigned long long dim0, unsigned long long dim1,
                                         unsigned long long row_stride_bytes, unsigned box0, unsigned box1,
                                         int swizzle_bytes) {
  static_assert(sizeof(tsr_emu::TensorMap2d) <= sizeof(tsr_tensor_map), "the map fits in 128 bytes");
  const unsigned inner = box0 * elem_bytes;
  if (reinterpret_cast<std::uintptr_t>(base) % 16 || row_stride_bytes % 16 || box0 == 0 || box1 == 0 ||
      box0 > 256 || box1 > 256 || inner % 16 ||
      (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 && elem_bytes != 8) ||
      (swizzle_bytes != 0 && swizzle_bytes != 32 && swizzle_bytes != 64 && swizzle_bytes != 128) ||
      (swizzle_bytes && inner > static_cast<unsigned>(swizzle_bytes)) || dim0 == 0 || dim1 == 0)
    return false;
  tsr_emu::TensorMap2d m{tsr_emu::kTensorMapMagic, elem_bytes, static_cast<unsigned>(swizzle_bytes), {box0, box1},
                         {dim0, dim1}, row_stride_bytes, static_cast<const unsigned char*>(base)};
  std::memset(out->opaque, 0, sizeof out->opaque);
  std::memcpy(out->opaque, &m, sizeof m);
  return true;
}

#define TSR_SMEM (tsr_emu::current->block->shared.data())
TSR_FN int tsr_thread() { return tsr_emu::current->tid; }
TSR_FN tsr_i64 tsr_block() { return tsr_emu::current->block->id; }
TSR_FN void tsr_sync() { tsr_emu::sync(); }
TSR_FN void tsr_bar_sync(int id, int count) { tsr_emu::named_sync(id, count); }
template <class T>
TSR_FN T tsr_shfl_xor(T v, int lane_mask) { return tsr_emu::exchange_xor(v, lane_mask); }
TSR_FN bool tsr_any(bool p) { return tsr_emu::vote(p, false) != 0; }
TSR_FN bool tsr_all(bool p) { return tsr_emu::vote(p, true) != 0; }
// tsr_mma_f16/bf16 are in tessera_cuda.h (they convert with its wrappers).
TSR_FN void tsr_ldmatrix_x1(unsigned r[1], const void* row) { tsr_emu::ldmatrix<1, false>(r, row); }
TSR_FN void tsr_ldmatrix_x2(unsigned r[2], const void* row) { tsr_emu::ldmatrix<2, false>(r, row); }
TSR_FN void tsr_ldmatrix_x4(unsigned r[4], const void* row) { tsr_emu::ldmatrix<4, false>(r, row); }
TSR_FN void tsr_ldmatrix_x1_trans(unsigned r[1], const void* row) { tsr_emu::ldmatrix<1, true>(r, row); }
TSR_FN void tsr_ldmatrix_x2_trans(unsigned r[2], const void* row) { tsr_emu::ldmatrix<2, true>(r, row); }
TSR_FN void tsr_ldmatrix_x4_trans(unsigned r[4], const void* row) { tsr_emu::ldmatrix<4, true>(r, row); }
TSR_FN void tsr_cp_async16(void* smem, const void* gmem, int src_bytes) { tsr_emu::cp_async16(smem, gmem, src_bytes); }
TSR_FN void tsr_cp_async_commit() { tsr_emu::current->copies.commit(); }
template <int N>
TSR_FN void tsr_cp_async_wait() {
  static_assert(N >= 0, "wait_group takes a count of groups");
  tsr_emu::cp_async_wait(static_cast<std::size_t>(N));
}
// Hopper: mbarrier, TMA, wgmma (tsr_wgmma_f16/bf16 are in tessera_cuda.h), setmaxnreg.
TSR_FN void tsr_mbar_init(unsigned long long* bar, unsigned count) { tsr_emu::mbar_init(bar, count); }
TSR_FN void tsr_fence_mbar_init() {}
TSR_FN void tsr_fence_proxy_async() {}
TSR_FN void tsr_mbar_arrive(unsigned long long* bar) { tsr_emu::mbar_arrive(bar, 0); }
TSR_FN void tsr_mbar_arrive_expect_tx(unsigned long long* bar, unsigned bytes) { tsr_emu::mbar_arrive(bar, bytes); }
TSR_FN bool tsr_mbar_try_wait(unsigned long long* bar, unsigned phase) { return tsr_emu::mbar_try_wait(bar, phase); }
TSR_FN void tsr_mbar_wait(unsigned long long* bar, unsigned phase) { tsr_emu::mbar_wait(bar, phase); }
TSR_FN void tsr_tma_load_2d(void* smem, const tsr_tensor_map* map, int c0, int c1, unsigned long long* bar) {
  tsr_emu::tma_load_2d(smem, map->opaque, c0, c1, bar);
}
TSR_FN void tsr_wgmma_fence() { tsr_emu::current->wgmma_fenced = true; }
TSR_FN void tsr_wgmma_commit() { tsr_emu::current->wgmma.commit(); }
template <int N>
TSR_FN void tsr_wgmma_wait() {
  static_assert(N >= 0, "wait_group takes a count of groups");
  tsr_emu::wgmma_wait(static_cast<std::size_t>(N));
}
template <int R>
TSR_FN void tsr_wgmma_fence_operand(float (&)[R]) {}
TSR_FN unsigned tsr_wgmma_desc_start(const void* smem, unsigned lbo_bytes, unsigned sbo_bytes, int swizzle) {
  return tsr_emu::wgmma_desc_start(smem, lbo_bytes, sbo_bytes, swizzle);
}
template <int R>
TSR_FN void tsr_setmaxnreg_inc() {
  static_assert(R >= 24 && R <= 256 && R % 8 == 0, "setmaxnreg takes 24..256, a multiple of 8");
}
template <int R>
TSR_FN void tsr_setmaxnreg_dec() {
  static_assert(R >= 24 && R <= 256 && R % 8 == 0, "setmaxnreg takes 24..256, a multiple of 8");
}

TSR_FN float tsr_bits_f32(unsigned int u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
TSR_FN unsigned int tsr_f32_bits(float f) {
  unsigned int u;
  std::memcpy(&u, &f, 4);
  return u;
}
TSR_FN double tsr_bits_f64(unsigned long long u) {
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}
// IEEE half <-> f32, rounding to nearest even (as the GPU's cvt.rn).
TSR_FN float tsr_f16_to_f32(unsigned short h) {
  const unsigned int sign = (unsigned int)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    const float v = (float)m * 5.9604644775390625e-8f;  // m * 2^-24
    return sign ? -v : v;
  }
  if (e == 31) return tsr_bits_f32(sign | 0x7f800000u | (m << 13));
  return tsr_bits_f32(sign | ((e + 112) << 23) | (m << 13));
}
TSR_FN unsigned short tsr_f32_to_f16(float f) {
  const unsigned int x = tsr_f32_bits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (unsigned short)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);
  const unsigned int e = ax >> 23;
  if (e < 113) {  // a half subnormal or zero
    if (e < 102) return (unsigned short)sign;
    const unsigned int m = (ax & 0x7fffffu) | 0x800000u, s = 126 - e;
    unsigned int r = m >> s;
    const unsigned int rem = m & ((1u << s) - 1), half = 1u << (s - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return (unsigned short)(sign | r);
  }
  const unsigned int mant = ax & 0x7fffffu;
  unsigned int r = ((e - 112) << 10) | (mant >> 13);
  const unsigned int rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return (unsigned short)(sign | r);
}
TSR_FN float tsr_expf(float x) { return std::exp(x); }
TSR_FN float tsr_exp2f(float x) { return std::exp2(x); }
TSR_FN float tsr_logf(float x) { return std::log(x); }
TSR_FN float tsr_log1pf(float x) { return std::log1p(x); }
TSR_FN float tsr_sqrtf(float x) { return std::sqrt(x); }
TSR_FN double tsr_sqrt(double x) { return std::sqrt(x); }
TSR_FN float tsr_tanhf(float x) { return std::tanh(x); }
TSR_FN float tsr_erff(float x) { return std::erf(x); }
TSR_FN float tsr_sinf(float x) { return std::sin(x); }
TSR_FN float tsr_cosf(float x) { return std::cos(x); }
TSR_FN float tsr_powf(float a, float b) { return std::pow(a, b); }
TSR_FN float tsr_fabsf(float x) { return std::fabs(x); }
TSR_FN double tsr_fabs(double x) { return std::fabs(x); }
TSR_FN bool tsr_isnan(double x) { return x != x; }

#endif  // TESSERA_CUDA_HOST_H
