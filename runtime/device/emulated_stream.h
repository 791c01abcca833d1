// The host emulation's streams and events (EmulatedBackend::create_stream,
// record_event): handles that record the order their users give work, so
// that a test double of a library that takes streams (tests/runtime/comm/
// nccl_double.cpp stands in for NCCL) can check it is given a stream of its
// own that waited for the kernels before it, and the emulation can check
// that the kernels after such work waited for it. The emulation's kernels
// have run when their launch returns, so its events are complete when
// recorded: what is checked is the order of the calls a GPU would need.
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
};

struct EmulatedEvent {
  static constexpr uint32_t kMagic = 0x54534556;  // "TSEV"
  uint32_t magic = kMagic;
  EmulatedStream* stream = nullptr;  // where it was recorded
  uint64_t launches = 0;             // kernels launched when it was recorded
  uint64_t work = 0;                 // stream->work when it was recorded
};

}  // namespace tessera::device
