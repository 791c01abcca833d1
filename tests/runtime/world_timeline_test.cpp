// The timeline of a run of several ranks (runtime/world_timeline.h), without
// MPI: a collective's span and its flow piece (the same id on every rank, a
// send's and its recv's the same), and the merge of ranks' timelines: the
// clocks' offsets applied (one within its error taken as 0), the flows'
// pieces ordered by time across ranks, a lone piece dropped.
// distributed_dump_cli_test.py runs the whole under mpirun.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runtime/world_timeline.h"

namespace tessera::jit {
namespace {

using json = nlohmann::json;
using std::chrono::steady_clock;

steady_clock::time_point at_ms(double ms) {
  return steady_clock::time_point(std::chrono::duration_cast<steady_clock::duration>(
      std::chrono::duration<double, std::milli>(ms)));
}

CollectiveRecord record(CollectiveKind kind, uint64_t step, int peer, double start_ms, double end_ms) {
  return {kind, step, peer, 64, at_ms(start_ms), at_ms(end_ms), false};
}

std::vector<json> of_phase(const json& timeline, const std::string& phases) {
  std::vector<json> out;
  for (const json& e : timeline["traceEvents"])
    if (phases.find(e["ph"].get<std::string>()) != std::string::npos) out.push_back(e);
  return out;
}

TEST(WorldTimeline, FlowIdsAreTheSameForOneCollectiveAndDifferOtherwise) {
  using K = CollectiveKind;
  EXPECT_EQ(collective_flow_id(K::Send, 5, 0, 1), collective_flow_id(K::Recv, 5, 0, 1));
  EXPECT_NE(collective_flow_id(K::Send, 5, 0, 1), collective_flow_id(K::Send, 5, 1, 0));
  EXPECT_NE(collective_flow_id(K::Send, 5, 0, 1), collective_flow_id(K::Send, 6, 0, 1));
  EXPECT_NE(collective_flow_id(K::AllReduce, 5, 0, 0), collective_flow_id(K::Barrier, 5, 0, 0));
  EXPECT_NE(collective_flow_id(K::AllReduce, 5, 0, 0), collective_flow_id(K::AllReduce, 6, 0, 0));
  EXPECT_LT(collective_flow_id(CollectiveKind::Send, (uint64_t{1} << 26) - 1, 4095, 4095), uint64_t{1} << 53);
  EXPECT_LT(collective_flow_id(CollectiveKind::Barrier, (uint64_t{1} << 50) - 1, 0, 0), uint64_t{1} << 53);
}

TEST(WorldTimeline, ACollectiveIsASpanWithItsPieceOfTheFlow) {
  JitTimeline tl(1000);
  tl.set_rank(1, 3);
  draw_collective(tl, record(CollectiveKind::AllReduce, 7, -1, 1010, 1012), 1, 3);
  draw_collective(tl, record(CollectiveKind::Send, 0, 2, 1020, 1021), 1, 3);
  draw_collective(tl, record(CollectiveKind::Recv, 0, 0, 1030, 1031), 1, 3);
  const json t = json::parse(tl.json("rank 1 (test)", 1100));
  std::vector<json> spans;
  for (const json& e : of_phase(t, "X"))
    if (e["cat"] == "collective") spans.push_back(e);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0]["name"], "all_reduce");
  EXPECT_EQ(spans[0]["pid"], 2);
  EXPECT_EQ(spans[0]["tid"], static_cast<int>(JitTimeline::Track::Collectives));
  EXPECT_EQ(spans[0]["args"], (json{{"step", 7}, {"bytes", 64}, {"failed", 0}}));
  EXPECT_EQ(spans[1]["args"]["peer"], 2);
  const std::vector<json> pieces = of_phase(t, "stf");
  ASSERT_EQ(pieces.size(), 3u);
  // A middle rank steps the collective's flow, at its span's middle.
  EXPECT_EQ(pieces[0]["ph"], "t");
  EXPECT_EQ(pieces[0]["id"], collective_flow_id(CollectiveKind::AllReduce, 7, 0, 0));
  EXPECT_EQ(pieces[0]["name"], "all_reduce");
  EXPECT_EQ(pieces[0]["bp"], "e");
  EXPECT_DOUBLE_EQ(pieces[0]["ts"].get<double>(), 11000);
  // Its send starts a flow its peer's recv ends; its recv ends rank 0's send's.
  EXPECT_EQ(pieces[1]["ph"], "s");
  EXPECT_EQ(pieces[1]["id"], collective_flow_id(CollectiveKind::Send, 0, 1, 2));
  EXPECT_EQ(pieces[1]["name"], "send/recv");
  EXPECT_EQ(pieces[2]["ph"], "f");
  EXPECT_EQ(pieces[2]["id"], collective_flow_id(CollectiveKind::Send, 0, 0, 1));
  EXPECT_EQ(t["otherData"]["rank"], 1);
  EXPECT_EQ(t["otherData"]["world_size"], 3);
  EXPECT_DOUBLE_EQ(t["otherData"]["steady_clock_origin_ms"].get<double>(), 1000);

  // A world of one: the span alone.
  JitTimeline one(0);
  draw_collective(one, record(CollectiveKind::Barrier, 0, -1, 1, 2), 0, 1);
  const json o = json::parse(one.json("one", 3));
  EXPECT_TRUE(of_phase(o, "stf").empty());
  EXPECT_EQ(of_phase(o, "X").size(), 2u);  // the run and the barrier
}

TEST(WorldTimeline, MergeAlignsTheClocksAndOrdersEachFlowByTime) {
  // Rank 1's clock reads 4000 ms ahead of rank 0's (measured within 0.01 ms);
  // its barrier came 0.1 ms before rank 0's, so its piece starts the flow.
  JitTimeline r0(1000), r1(5000);
  r0.set_rank(0, 2);
  r1.set_rank(1, 2);
  draw_collective(r0, record(CollectiveKind::Barrier, 0, -1, 1010, 1012), 0, 2);
  draw_collective(r1, record(CollectiveKind::Barrier, 0, -1, 5009.9, 5011.9), 1, 2);
  draw_collective(r0, record(CollectiveKind::AllReduce, 1, -1, 1020, 1021), 0, 2);  // rank 1's left out
  const std::string merged =
      merge_rank_timelines({{r0.json("rank 0 (t)", 1100), 0, 0}, {r1.json("rank 1 (t)", 5100), 4000, 0.01}});
  const json m = json::parse(merged);
  std::vector<json> barriers;
  for (const json& e : of_phase(m, "X"))
    if (e["name"] == "barrier") barriers.push_back(e);
  ASSERT_EQ(barriers.size(), 2u);
  EXPECT_EQ(barriers[0]["pid"], 2);  // by time: rank 1's first
  EXPECT_NEAR(barriers[0]["ts"].get<double>(), 9900, 1e-6);
  EXPECT_NEAR(barriers[1]["ts"].get<double>(), 10000, 1e-6);
  const std::vector<json> pieces = of_phase(m, "stf");
  ASSERT_EQ(pieces.size(), 2u);  // the all_reduce's lone piece dropped
  EXPECT_EQ(pieces[0]["pid"], 2);
  EXPECT_EQ(pieces[0]["ph"], "s");
  EXPECT_EQ(pieces[1]["pid"], 1);
  EXPECT_EQ(pieces[1]["ph"], "f");
  EXPECT_EQ(pieces[0]["id"], pieces[1]["id"]);
  EXPECT_EQ(m["otherData"]["ranks"], 2);
  EXPECT_EQ(m["otherData"]["flows"], 1);
  EXPECT_EQ(m["otherData"]["flow_pieces_dropped"], 1);
  EXPECT_DOUBLE_EQ(m["otherData"]["clocks"][1]["offset_used_ms"].get<double>(), 4000);
  int names = 0;
  for (const json& e : of_phase(m, "M"))
    if (e["name"] == "process_name")
      names += e["args"]["name"] == "rank " + std::to_string(e["pid"].get<int>() - 1) + " (t)";
  EXPECT_EQ(names, 2);

  // An offset within its error is 0: the clocks cannot be told apart.
  const json same = json::parse(
      merge_rank_timelines({{r0.json("rank 0 (t)", 1100), 0, 0}, {r0.json("rank 0 (t)", 1100), 0.002, 0.003}}));
  EXPECT_DOUBLE_EQ(same["otherData"]["clocks"][1]["offset_used_ms"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(same["otherData"]["clocks"][1]["shift_ms"].get<double>(), 0);

  try {
    merge_rank_timelines({{r0.json("rank 0 (t)", 1100), 0, 0}, {"{\"traceEvents\": [", 0, 0}});
    FAIL() << "a timeline that is not JSON was merged";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1's timeline.json is not a timeline"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::jit
