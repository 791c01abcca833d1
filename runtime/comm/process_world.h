// ProcessWorld: whether this process is one rank of several and, if so, its
// collectives' transport. mpirun (Open MPI) tells each process its rank and
// the world's size in the environment (OMPI_COMM_WORLD_RANK, _SIZE,
// _LOCAL_RANK); a process started without it is a world of one and loads
// no MPI. Under mpirun, join_world() loads libmpi (mpi_library.h),
// initializes it and installs an MpiTransport in process_collectives().
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace tessera::comm {

// What the launcher says of this process; nullopt without a launcher.
struct LauncherRanks {
  int rank = 0, size = 1, local_rank = 0;
};
std::optional<LauncherRanks> launcher_ranks();

// Joins the launcher's world (a no-op without one, or when joined): throws
// std::runtime_error with what to do when MPI cannot be loaded or started.
// `timeout_s`: each collective's deadline (JIT parameter commtimeout);
// `bucket_bytes`: the all_reduce buckets' size (JIT parameter bucket, in MB).
void join_world(double timeout_s, size_t bucket_bytes);
// The end of a run: waits for the all_reduces still in buckets (every rank
// must take part in them); "" or the error of one that failed.
std::string finish_collectives();
// MPI_Finalize, after a run that ended normally; a no-op when not joined.
// A run that fails leaves without it: mpirun then ends the other ranks.
void leave_world();

// Each rank's steady clock against rank 0's, measured now by pings between
// rank 0 and each rank (MpiTransport::clock_offsets; a few round trips per
// rank, within the collectives' timeout). Every rank must call it; rank 0
// gets an entry per rank, the others an empty vector; a world of one {{0, 0}}.
// Throws std::runtime_error when a rank does not answer.
struct RankClock {
  double offset_ms = 0;  // the rank's clock minus rank 0's
  double error_ms = 0;   // the offset is right within this
};
std::vector<RankClock> measure_clocks();

// "rank 1 of 4 (Open MPI v4.1.4)" or "one process".
std::string world_text();
// --stats' line: the rank, the world and what the collectives did
// (calls per operation, bytes moved, time in them).
std::string collectives_stats_line();

}  // namespace tessera::comm
