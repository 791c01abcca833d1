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
#ifndef TESSERA_CUDA_HOST_H
#define TESSERA_CUDA_HOST_H

#include <boost/context/fiber.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
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

struct Thread {
  int tid = 0;
  Block* block = nullptr;
  boost::context::fiber scheduler;  // where tsr_sync returns to
  bool waiting = false;             // at a barrier
};

struct Block {
  tsr_i64 id = 0;
  int threads = 0;
  std::vector<unsigned char> shared;   // dynamic shared memory
  std::vector<unsigned char> exchange;  // 8 bytes per thread for shuffles and votes
};

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
  blk.exchange.assign(static_cast<std::size_t>(threads) * 8, 0);
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
  std::memcpy(&b->exchange[static_cast<std::size_t>(t->tid) * 8], &v, sizeof(T));
  sync();
  const int src = t->tid ^ lane_mask;
  T r = v;  // a lane outside the block keeps its own value
  if (src < b->threads && (src / 32) == (t->tid / 32)) std::memcpy(&r, &b->exchange[static_cast<std::size_t>(src) * 8], sizeof(T));
  sync();
  return r;
}

inline int vote(bool p, bool all) {
  Thread* t = current;
  Block* b = t->block;
  b->exchange[static_cast<std::size_t>(t->tid) * 8] = p ? 1 : 0;
  sync();
  const int first = t->tid / 32 * 32;
  bool any = false, every = true;
  for (int i = first; i < first + 32 && i < b->threads; ++i) {
    const bool q = b->exchange[static_cast<std::size_t>(i) * 8] != 0;
    any = any || q;
    every = every && q;
  }
  sync();
  return all ? every : any;
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
