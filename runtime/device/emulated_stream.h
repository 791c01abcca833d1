// The host emulation's streams and events (EmulatedBackend::create_stream,
// record_event): handles that record the order their users give work, so
// that a test double of a library that takes streams (tests/runtime/comm/
// nccl_double.cpp stands in for NCCL) can check it is given a stream of its
// own that waited for the kernels before it, and the emulation can check
// that the kernels and copies that touch such work's memory waited for it.
// The check is per block, not per stream: a kernel that touches none of the
// memory another stream's work uses may run beside it (as on a GPU, where
// that is the overlap of compute with a collective). The emulation's
// kernels have run when their launch returns, so its events are complete
// when recorded: what is checked is the order of the calls a GPU would need.
// Plain structs: the doubles include this header.
#pragma once

#include <cstdint>

namespace tessera::device {

struct EmulatedStream {
  static constexpr uint32_t kMagic = 0x54535354;  // "TSST"
  uint32_t magic = kMagic;
  bool kernels = false;  // the kernels' stream (the backend's own), else one of create_stream's
  const uint64_t* launches = nullptr;  // the backend's count of kernels launched so far
  uint64_t waits = 0;    // stream_wait calls on it
  // The newest event it waited for: the kernels launched when that event
  // was recorded, and whether it was recorded on the kernels' stream.
  uint64_t waited_launches = 0;
  bool waited_kernels = false;
  // Work its user enqueued on it (a double counts its calls here), and how
  // much of it the kernels' stream has waited for (through an event
  // recorded on it after that work).
  uint64_t work = 0;
  uint64_t work_waited_by_kernels = 0;
  // The memory its work reads or writes, as its user declares it (use()):
  // device addresses [begin, end) and the work they belong to. A kernel
  // launch, upload or download on the kernels' stream that touches such
  // memory before the kernels' stream waited for that work faults. The
  // newest kUses of them (older ones have been waited for in any test).
  static constexpr uint32_t kUses = 256;
  struct Use {
    uint64_t begin = 0, end = 0, work = 0;
  };
  Use uses[kUses];
  uint64_t n_uses = 0;
  // Kernels launched while some of its work was not yet waited for by the
  // kernels' stream: the compute that overlapped that work on a GPU.
  uint64_t overlapped_launches = 0;
  // A test double's stand-in for work that never completes (a collective
  // that hangs): the events recorded on the stream from then on are never
  // done (DeviceBackend::event_done), so its user's deadline must end the wait.
  bool stalled = false;

  // Declares that its newest work (`work`, counted first) reads or writes `bytes` at `p`.
  void use(const void* p, uint64_t bytes) {
    const auto b = reinterpret_cast<uint64_t>(p);
    uses[n_uses++ % kUses] = Use{b, b + (bytes ? bytes : 1), work};
  }
};

struct EmulatedEvent {
  static constexpr uint32_t kMagic = 0x54534556;  // "TSEV"
  uint32_t magic = kMagic;
  EmulatedStream* stream = nullptr;  // where it was recorded
  uint64_t launches = 0;             // kernels launched when it was recorded
  uint64_t work = 0;                 // stream->work when it was recorded
  bool never = false;                // recorded on a stalled stream
};

}  // namespace tessera::device
