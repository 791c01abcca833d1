#include "runtime/comm/process_world.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include "runtime/comm/mpi_library.h"
#include "runtime/comm/mpi_transport.h"
#ifndef TESSERA_NO_NCCL
#include "runtime/comm/nccl_transport.h"
#endif
#include "vm/graph/collectives.h"

namespace tessera::comm {

namespace {

bool joined = false;
MpiTransport* mpi_transport = nullptr;  // process_collectives()'s transport, once joined

std::optional<int> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0) return std::nullopt;
  return static_cast<int>(x);
}

}  // namespace

std::optional<LauncherRanks> launcher_ranks() {
  auto size = env_int("OMPI_COMM_WORLD_SIZE");
  auto rank = env_int("OMPI_COMM_WORLD_RANK");
  if (!size || !rank) return std::nullopt;
  return LauncherRanks{*rank, *size, env_int("OMPI_COMM_WORLD_LOCAL_RANK").value_or(0)};
}

void join_world(double timeout_s, size_t bucket_bytes) {
  Collectives& c = process_collectives();
  c.set_timeout(timeout_s);
  c.set_bucket_bytes(bucket_bytes);
  if (joined) return;
  auto ranks = launcher_ranks();
  if (!ranks) return;
  const MpiLibrary& mpi = MpiLibrary::get();
  if (!mpi.available())
    throw std::runtime_error("started by mpirun as rank " + std::to_string(ranks->rank) + " of " +
                             std::to_string(ranks->size) + ", but MPI cannot be used: " + mpi.why_unavailable());
  int initialized = 0, provided = 0;
  mpi.check(mpi.api().MPI_Initialized(&initialized), "MPI_Initialized");
  // An embedding host may have initialized MPI itself.
  if (!initialized)
    mpi.check(mpi.api().MPI_Init_thread(nullptr, nullptr, kMpiThreadSerialized, &provided), "MPI_Init_thread");
  auto transport = std::make_unique<MpiTransport>(mpi);
  mpi_transport = transport.get();
  c.set_transport(std::move(transport));
#ifndef TESSERA_NO_NCCL
  // Tensors on the GPU: NCCL, loaded when the first of them meets a collective.
  c.set_device_transport(std::make_unique<NcclTransport>(*c.transport()));
#endif
  joined = true;
}

std::string finish_collectives() {
  try {
    process_collectives().drain();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

void leave_world() {
  if (!joined) return;
  process_collectives().shutdown();
  const MpiLibrary& mpi = MpiLibrary::get();
  int finalized = 0;
  mpi.api().MPI_Finalized(&finalized);
  if (!finalized) mpi.api().MPI_Finalize();
  joined = false;
}

std::vector<RankClock> measure_clocks() {
  if (!joined || !mpi_transport) return {RankClock{}};
  constexpr int kRounds = 10;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(process_collectives().timeout()));
  std::vector<RankClock> out;
  try {
    for (const auto& c : mpi_transport->clock_offsets(kRounds, deadline)) out.push_back({c.offset_ms, c.error_ms});
  } catch (const CommTimeout& e) {
    throw std::runtime_error(fmt::format("measuring the ranks' clocks: a rank did not answer within {:g} s ({})",
                                         process_collectives().timeout(), e.what()));
  }
  return out;
}

std::string world_text() {
  const Collectives& c = process_collectives();
  if (!c.distributed()) return "one process";
  return fmt::format("rank {} of {} ({})", c.rank(), c.size(), c.describe());
}

}  // namespace tessera::comm

namespace tessera::comm {

std::string collectives_stats_line() {
  const Collectives& c = process_collectives();
  const CollectiveCounters k = c.counters();
  std::string line = c.distributed() ? fmt::format("  world: {}", world_text())
                                     : std::string("  world: one process, rank 0 of 1 (mpirun -np N starts N ranks)");
  if (k.total_calls() == 0) return line + ": no collectives\n";
  std::string per;
  for (int i = 0; i < kCollectiveKinds; ++i)
    if (k.calls[i])
      per += fmt::format("{}{} {}", per.empty() ? "" : ", ", collective_name(static_cast<CollectiveKind>(i)), k.calls[i]);
  const std::string buckets =
      k.bucketed ? fmt::format("; {} all_reduces packed in {} buckets (bucket {} MB)", k.bucketed, k.buckets,
                               static_cast<double>(c.bucket_bytes()) / (1 << 20))
                 : std::string();
  std::string device;
  if (const DeviceCommTransport* d = c.device_transport()) {
    const std::string what = d->describe();
    if (k.device_calls) device = fmt::format("; {} carried {} of them (their tensors on the GPU)", what, k.device_calls);
    else if (what.rfind("no NCCL", 0) == 0) device = "; tensors on the GPU took the host's path: " + what;
  }
  return line + fmt::format(": collectives {} ({}), {:.3f} MB moved, {:.3f} ms in them (timeout {:g} s){}{}\n",
                            k.total_calls(), per, static_cast<double>(k.bytes) / 1e6, k.ms, c.timeout(), buckets,
                            device);
}

}  // namespace tessera::comm
