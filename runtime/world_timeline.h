// The timeline of a distributed run (under mpirun; docs/observability.md,
// "A run of several ranks"):
//   - draw_collective: one of this rank's collectives as a span on its
//     timeline's collectives track, with its piece of the Chrome trace flow
//     that links the same collective's spans on every rank;
//   - merge_rank_timelines: the ranks' timelines as one, a process per rank,
//     their times on rank 0's clock;
//   - finish_world_dump: the end of `--dump DIR` under mpirun: the ranks
//     agree that DIR/rank-K/ is written, and rank 0 merges their timelines
//     into DIR/timeline.json.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/jit_timeline.h"
#include "vm/graph/collectives.h"

namespace tessera::jit {

// The id of a collective's flow: the same on every rank for the same
// collective. (kind, step) for the collectives of every rank; for send and
// recv (src, dst, step), step counting that pair's messages, so that the
// k-th send from A to B and the k-th recv on B from A share it. Below 2^53
// (a JavaScript number holds it exactly, as chrome://tracing reads it);
// unique while steps are below 2^50 (2^26 for a pair's messages) and ranks
// below 4096.
uint64_t collective_flow_id(CollectiveKind kind, uint64_t step, int src, int dst);

// Draws `r`, a collective of rank `rank` of `world_size`, on `tl`: a span
// named after the operation on the collectives track (category
// "collective"; args step, bytes, failed, and for send and recv the peer),
// with its piece of the flow (at the span's middle): rank 0's starts the
// flow, the last rank's ends it, and a send starts the flow its recv ends
// (the flow's name is the operation's, "send/recv" for both of those). A
// world of one draws the span alone. Thread-safe as the timeline is.
void draw_collective(JitTimeline& tl, const CollectiveRecord& r, int rank, int world_size) noexcept;

// One rank's timeline for the merge.
struct RankTimeline {
  std::string json;         // its timeline.json
  double offset_ms = 0;     // its steady clock minus rank 0's
  double error_ms = 0;      // the bound of offset_ms's error
};

// The ranks' timelines (in rank order) as one Chrome trace JSON text:
// every rank's events, its process (pid rank + 1, named by the rank's own
// process_name) kept, their times moved onto one clock: each rank's
// otherData.steady_clock_origin_ms less its offset is where its ts 0
// falls on rank 0's clock (an offset within its error bound of 0 is taken
// as 0: the clocks cannot be told apart, as on one host, where ranks share
// the steady clock), and the earliest rank starts at 0. The pieces of each
// flow are ordered by time again across ranks (the first starts it, the
// last ends it; a flow with one piece left is dropped, e.g. its other
// spans left out under --dump-keep). otherData: "ranks", each rank's
// "clocks" (offset_ms, error_ms, shift_ms: what its times moved by),
// "flows" and "flow_pieces_dropped", and each rank's own otherData
// ("per_rank"). Throws std::runtime_error naming the rank whose timeline is
// not one.
std::string merge_rank_timelines(const std::vector<RankTimeline>& ranks);

// The end of `--dump DIR` under mpirun (process_collectives().distributed()),
// on every rank once it wrote its own files (DIR/rank-K/): `ok` says whether
// its run succeeded and its files were written. Each rank that succeeded
// enters a barrier of process_collectives() (after which every rank's files
// are written) and the measuring of the ranks' clocks; then rank 0 reads
// DIR/rank-K/timeline.json of every rank, writes the merge to
// DIR/timeline.json and DIR/index.html (links to the merge and to each
// rank's page). A rank that failed takes no part (mpirun ends the others,
// or their barrier fails after the collectives' timeout naming the missing
// ranks): it throws std::runtime_error saying that the timelines are not
// merged, as every rank whose barrier or clocks failed does.
void finish_world_dump(const std::string& dir, bool ok, const std::string& script);

}  // namespace tessera::jit
