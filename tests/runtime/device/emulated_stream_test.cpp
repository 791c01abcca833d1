// The host emulation's check of stream order (emulated_stream.h), per
// block: a copy that touches memory another stream's work uses faults until
// the kernels' stream waited for an event recorded after that work; memory
// no such work uses is copied at once (the overlap a GPU allows); and the
// host wait hook (DeviceBackend::set_host_wait_hook) runs before a copy to
// the host, until it is cleared.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "runtime/device/emulated_backend.h"
#include "runtime/device/emulated_stream.h"

namespace tessera::device {
namespace {

struct Blocks {
  EmulatedBackend backend;
  DevicePtr a = backend.allocator().allocate(256), b = backend.allocator().allocate(256);
  ~Blocks() {
    backend.allocator().free(a);
    backend.allocator().free(b);
  }
};

// What a library on another stream does (the NCCL test double): counts its
// work, declares the memory it uses.
void enqueue_use(void* stream, DevicePtr p, size_t bytes) {
  auto* s = static_cast<EmulatedStream*>(stream);
  ++s->work;
  s->use(reinterpret_cast<const void*>(p), bytes);
}

TEST(EmulatedStreamOrder, CopyOfMemoryInUseFaultsUntilTheKernelsStreamWaits) {
  Blocks m;
  void* comm = m.backend.create_stream();
  enqueue_use(comm, m.a, 256);
  std::vector<char> host(256);
  EXPECT_THROW(m.backend.download(host.data(), m.a, 256), DeviceFault);
  EXPECT_THROW(m.backend.upload(m.a + 128, host.data(), 16), DeviceFault);  // inside the range too
  m.backend.download(host.data(), m.b, 256);  // other memory: no wait needed
  m.backend.upload(m.b, host.data(), 256);
  void* done = m.backend.record_event(comm);
  m.backend.stream_wait(nullptr, done);
  m.backend.destroy_event(done);
  m.backend.download(host.data(), m.a, 256);
  m.backend.upload(m.a, host.data(), 256);
}

TEST(EmulatedStreamOrder, WaitingForAnEarlierEventLeavesLaterWorkUnwaited) {
  Blocks m;
  void* comm = m.backend.create_stream();
  enqueue_use(comm, m.a, 256);
  void* first = m.backend.record_event(comm);
  enqueue_use(comm, m.b, 256);
  m.backend.stream_wait(nullptr, first);
  m.backend.destroy_event(first);
  std::vector<char> host(256);
  m.backend.download(host.data(), m.a, 256);
  EXPECT_THROW(m.backend.download(host.data(), m.b, 256), DeviceFault);
}

TEST(EmulatedStreamOrder, AnEventOnTheKernelsStreamDoesNotCountAsWaitingForAnother) {
  Blocks m;
  void* comm = m.backend.create_stream();
  enqueue_use(comm, m.a, 256);
  void* kernels = m.backend.record_event(nullptr);
  m.backend.stream_wait(comm, kernels);  // the other stream waits for the kernels: not the reverse
  m.backend.destroy_event(kernels);
  std::vector<char> host(256);
  EXPECT_THROW(m.backend.download(host.data(), m.a, 256), DeviceFault);
}

TEST(HostWaitHook, RunsBeforeACopyToTheHostUntilCleared) {
  Blocks m;
  int calls = 0;
  m.backend.set_host_wait_hook([&] { ++calls; });
  std::vector<char> host(256);
  m.backend.download(host.data(), m.a, 256);
  m.backend.upload(m.a, host.data(), 256);  // an upload does not wait for the device
  EXPECT_EQ(calls, 1);
  m.backend.set_host_wait_hook({});
  m.backend.download(host.data(), m.a, 256);
  EXPECT_EQ(calls, 1);
}

TEST(HostWaitHook, ItsErrorIsTheCopysError) {
  Blocks m;
  m.backend.set_host_wait_hook([] { throw std::runtime_error("a collective in flight passed its deadline"); });
  std::vector<char> host(256);
  try {
    m.backend.download(host.data(), m.a, 256);
    FAIL() << "the hook's error did not stop the copy";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("passed its deadline"), std::string::npos);
  }
}

}  // namespace
}  // namespace tessera::device
