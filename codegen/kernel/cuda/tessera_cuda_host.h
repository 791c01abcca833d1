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
#ifndef TESSERA_CUDA_HOST_H
#define TESSERA_CUDA_HOST_H

#include <boost/context/fiber.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
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

struct Thread {
  int tid = 0;
  Block* block = nullptr;
  boost::context::fiber scheduler;  // where tsr_sync returns to
  bool waiting = false;             // at a barrier
  std::vector<AsyncCopy> open;                 // cp.async since the last commit
  std::deque<std::vector<AsyncCopy>> groups;  // committed, oldest first
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
};

inline unsigned char* slot(Block* b, int tid) { return &b->exchange[static_cast<std::size_t>(tid) * kSlot]; }

inline thread_local Thread* current = nullptr;

inline void sync() {
  Thread* t = current;
  t->waiting = true;
  t->scheduler = std::move(t->scheduler).resume();
  current = t;
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
    std::vector<boost::context::fiber> fibers;
    fibers.reserve(ts.size());
    for (int i = 0; i < threads; ++i) {
      Thread* t = &ts[static_cast<std::size_t>(i)];
      t->tid = i;
      t->block = &blk;
      t->waiting = false;
      t->open.clear();  // a previous block's copies, never waited for, never land
      t->groups.clear();
      SlabStack st{stacks.data() + static_cast<std::size_t>(i) * kStack, kStack};
      fibers.emplace_back(std::allocator_arg, st, [t, &body](boost::context::fiber&& sched) {
        t->scheduler = std::move(sched);
        current = t;
        body();
        return std::move(t->scheduler);
      });
    }
    for (;;) {
      int running = 0, waiting = 0;
      for (int i = 0; i < threads; ++i) {
        auto& f = fibers[static_cast<std::size_t>(i)];
        if (!f) continue;
        ts[static_cast<std::size_t>(i)].waiting = false;
        current = &ts[static_cast<std::size_t>(i)];
        f = std::move(f).resume();
        current = nullptr;
        if (f) ++running, waiting += ts[static_cast<std::size_t>(i)].waiting ? 1 : 0;
      }
      if (!blk.fault.empty()) throw std::logic_error("tsr_emu: block " + std::to_string(b) + ": " + blk.fault);
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

// Whether [p, p + 16) lies in the block's shared memory, 16-byte aligned.
inline bool shared_16(const Block* b, const void* p) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p), base = reinterpret_cast<std::uintptr_t>(b->shared.data());
  return a >= base && a + 16 <= base + b->shared.size() && (a - base) % 16 == 0;
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
  t->open.push_back(c);
}

inline void cp_async_commit() {
  Thread* t = current;
  t->groups.push_back(std::move(t->open));
  t->open.clear();
}

inline void cp_async_wait(std::size_t pending) {
  Thread* t = current;
  for (; t->groups.size() > pending; t->groups.pop_front())
    for (const AsyncCopy& c : t->groups.front()) std::memcpy(c.dst, c.bytes, 16);
}

}  // namespace tsr_emu

#define TSR_SMEM (tsr_emu::current->block->shared.data())
TSR_FN int tsr_thread() { return tsr_emu::current->tid; }
TSR_FN tsr_i64 tsr_block() { return tsr_emu::current->block->id; }
TSR_FN void tsr_sync() { tsr_emu::sync(); }
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
TSR_FN void tsr_cp_async_commit() { tsr_emu::cp_async_commit(); }
template <int N>
TSR_FN void tsr_cp_async_wait() {
  static_assert(N >= 0, "wait_group takes a count of groups");
  tsr_emu::cp_async_wait(static_cast<std::size_t>(N));
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
