// What other ranks send rank 0 through the store is input from outside the
// process: every field is checked, and a bad one is an error that names it.
#include "tools/measure/rank_samples.h"

#include <gtest/gtest.h>

#include "engine/transport/transport_cpu.h"

namespace omnib {
namespace {

using nlohmann::json;

RankSamples two_runs() {
  RankSamples s(2);
  s.times_us = {{10, 11, 12}, {13, 14, 15}};
  s.cpu = {{5, 1, 2}, {6, 2, 3}};
  s.wrong = {{3, 7}};
  s.calls_checked = 8;
  s.wire = ByteCounters{1000, 0, 4, 0};
  return s;
}

TEST(RankSamples, RoundTripThroughJson) {
  auto back = RankSamples::from_json(two_runs().to_json(), 2, 3);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back.value().times_us, two_runs().times_us);
  EXPECT_EQ(back.value().wrong, two_runs().wrong);
  EXPECT_EQ(back.value().wire->sent, 1000u);
  EXPECT_EQ(back.value().wire->frames_sent, 4u);
  EXPECT_FALSE(back.value().link_bytes.has_value());
  EXPECT_FALSE(back.value().link_retransmits.has_value());
  EXPECT_DOUBLE_EQ(back.value().cpu[1].wait_us, 3);
}

// Every rank's retransmissions add up, per timed call, into the record.
TEST(RankSamples, RetransmissionsAddUpOverRanks) {
  std::vector<RankSamples> ranks;
  for (uint64_t retransmits : {12u, 0u, 30u}) {
    RankSamples s = two_runs();
    s.link_bytes = 5000;
    s.link_retransmits = retransmits;
    auto back = RankSamples::from_json(s.to_json(), 2, 3);
    ASSERT_TRUE(back.is_ok()) << back.status().message();
    ASSERT_EQ(back.value().link_retransmits, retransmits);
    ranks.push_back(back.take());
  }
  RecordFrame frame;
  frame.iters = 3;
  frame.repeat = 2;
  frame.nodes = 3;
  ResultRecord r;
  combine_rank_samples(frame, ranks, r);
  ASSERT_TRUE(r.link_retransmits_per_call.has_value());
  EXPECT_DOUBLE_EQ(*r.link_retransmits_per_call, 42.0 / 6);
  // A rank that could not count leaves the record without the figure.
  ranks[1].link_retransmits.reset();
  ResultRecord partial;
  combine_rank_samples(frame, ranks, partial);
  EXPECT_FALSE(partial.link_retransmits_per_call.has_value());
}

TEST(RankSamples, MalformedValuesAreErrorsNamingTheField) {
  struct Bad {
    const char* field;
    json value;
  };
  for (const Bad& b : {Bad{"t", "not a list"}, Bad{"t", json::array({json::array({1, "x", 3}), json::array({1, 2, 3})})},
                       Bad{"t", json::array({json::array({1, 2})})}, Bad{"cpu", json::array({1, 2})}, Bad{"cpu", json::array({json::array({1, 2}), json::array({1, 2})})},
                       Bad{"wrong", json::array({json::array({1})})}, Bad{"checked", -3},
                       Bad{"wire", json::array({1, -4})}, Bad{"link", "many"}}) {
    json j = two_runs().to_json();
    j[b.field] = b.value;
    auto r = RankSamples::from_json(j, 2, 3);
    ASSERT_FALSE(r.is_ok()) << b.field << " " << b.value.dump();
    EXPECT_NE(r.status().message().find(std::string("'") + b.field + "'"), std::string::npos) << r.status().message();
  }
  EXPECT_FALSE(RankSamples::from_json(json("text"), 2, 3).is_ok());
}

// Rank 0 turns the samples into a record: the slowest worker per iteration,
// wrong calls as the union over ranks.
TEST(RankSamples, CombineTakesTheSlowestWorkerAndUnitesWrongCalls) {
  RankSamples a = two_runs(), b = two_runs();
  b.times_us = {{20, 1, 1}, {1, 1, 30}};
  b.wrong = {{3, 1}, {5, 2}};
  RankSamples aggregator(2);  // a dedicated aggregator times nothing
  aggregator.cpu = {{100, 0}, {100, 0}};
  aggregator.wire = ByteCounters{3000, 0, 9, 0};
  ResultRecord r;
  combine_rank_samples({"omni", RunConfig{}, 3, 1, 2, true, 2}, {a, b, aggregator}, r);
  EXPECT_EQ(r.samples_us, (std::vector<double>{20, 11, 12, 13, 14, 30}));
  EXPECT_EQ(r.wrong_calls, 2u);
  EXPECT_EQ(r.wrong_elements, 10u);
  EXPECT_EQ(r.first_wrong_call, 3u);
  EXPECT_EQ(r.correct, false);
  EXPECT_DOUBLE_EQ(*r.wire_sent_per_rank_max, 3000.0 / 6);
  EXPECT_DOUBLE_EQ(*r.wire_frames_total, (4 + 4 + 9) / 6.0);
  EXPECT_EQ(r.runs.size(), 2u);
  EXPECT_DOUBLE_EQ(r.runs[0].median_us, 12);
}

// Each rank's CPU wait is a share of the time the timed calls took (the
// slowest worker's, summed): a dedicated aggregator that waited 60 us over
// calls that took 100 us in all waited 60% of the call time.
TEST(RankSamples, CpuWaitIsEachRanksShareOfTheCallTime) {
  if (!cpu_wait_measured()) GTEST_SKIP() << "this kernel reports no run delays (/proc/self/task/*/schedstat)";
  RankSamples a = two_runs(), b = two_runs();
  b.times_us = {{20, 1, 1}, {1, 1, 30}};
  RankSamples aggregator(2);
  aggregator.cpu = {{100, 0, 50}, {100, 0, 10}};
  ResultRecord r;
  combine_rank_samples({"omni", RunConfig{}, 3, 1, 2, true, 2}, {a, b, aggregator}, r);
  ASSERT_TRUE(r.cpu.has_value());
  const double call_time = 20 + 11 + 12 + 13 + 14 + 30;
  ASSERT_EQ(r.cpu->wait_share_per_rank.size(), 3u);
  EXPECT_DOUBLE_EQ(r.cpu->wait_share_per_rank[0], 5 / call_time);
  EXPECT_DOUBLE_EQ(r.cpu->wait_share_per_rank[2], 60 / call_time);
  EXPECT_DOUBLE_EQ(*r.cpu->wait_share_max(), 60 / call_time);
}

// The preemptions of the most preempted rank, per timed call: what is left
// of the CPU wait where schedstat is missing.
TEST(RankSamples, PreemptionsPerCallOfTheMostPreemptedRank) {
  RankSamples a = two_runs(), b = two_runs();
  a.cpu = {{10, 0, 0, 3}, {10, 0, 0, 3}};
  b.cpu = {{10, 0, 0, 1}, {10, 0, 0, 0}};
  RankSamples aggregator(2);
  aggregator.cpu = {{100, 0, 50, 12}, {100, 0, 10, 6}};
  ResultRecord r;
  combine_rank_samples({"omni", RunConfig{}, 3, 1, 2, true, 2}, {a, b, aggregator}, r);
  ASSERT_TRUE(r.cpu.has_value());
  ASSERT_TRUE(r.cpu->preemptions_per_call_max.has_value());
  EXPECT_DOUBLE_EQ(*r.cpu->preemptions_per_call_max, 18.0 / 6);
  // They travel through the store with the rest of a rank's samples.
  auto back = RankSamples::from_json(aggregator.to_json(), 2, 0);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_DOUBLE_EQ(back.value().cpu[0].preemptions, 12);
}

// With --profile, the transport's part of every rank's CPU, per call and
// per wire byte of the ranks; it travels with the rest of the samples. A
// baseline that moves its own bytes (no wire counters) gets none.
TEST(RankSamples, TransportCpuPerCallAndPerWireByte) {
  set_transport_cpu_accounting(true);
  RankSamples a = two_runs(), b = two_runs();
  a.cpu = {{10, 0, 0, 0, 4}, {10, 0, 0, 0, 2}};
  b.cpu = {{10, 0, 0, 0, 3}, {10, 0, 0, 0, 3}};
  ResultRecord r;
  combine_rank_samples({"omni", RunConfig{}, 3, 1, 2, true, 2}, {a, b}, r);
  ASSERT_TRUE(r.cpu.has_value());
  ASSERT_TRUE(r.cpu->transport_us_per_call.has_value());
  EXPECT_DOUBLE_EQ(*r.cpu->transport_us_per_call, 12.0 / 6);
  // 2000 wire bytes over 6 calls.
  EXPECT_DOUBLE_EQ(*r.cpu->transport_ns_per_wire_byte, 12.0 / 6 * 1e3 / (2000.0 / 6));
  auto back = RankSamples::from_json(a.to_json(), 2, 3);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_DOUBLE_EQ(back.value().cpu[0].transport_us, 4);

  a.wire.reset();
  b.wire.reset();
  ResultRecord own_transport;
  combine_rank_samples({"gloo-ring", RunConfig{}, 3, 1, 2, true, 2}, {a, b}, own_transport);
  ASSERT_TRUE(own_transport.cpu.has_value());
  EXPECT_FALSE(own_transport.cpu->transport_us_per_call.has_value());

  set_transport_cpu_accounting(false);
  ResultRecord off;
  combine_rank_samples({"omni", RunConfig{}, 3, 1, 2, true, 2}, {two_runs(), two_runs()}, off);
  EXPECT_FALSE(off.cpu->transport_us_per_call.has_value());
}

}  // namespace
}  // namespace omnib

#include "tools/net/tcp_retransmits.h"

namespace omnib {
namespace {

TEST(TcpRetransmits, ReadsRetransSegsByItsColumnName) {
  const std::string snmp =
      "Ip: Forwarding DefaultTTL\nIp: 1 64\n"
      "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab "
      "InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n"
      "Tcp: 1 200 120000 -1 10 9 0 0 2 5000 4000 77 0 3 0\n";
  auto n = parse_tcp_retransmits(snmp);
  ASSERT_TRUE(n.is_ok()) << n.status().message();
  EXPECT_EQ(n.value(), 77u);
  EXPECT_FALSE(parse_tcp_retransmits("Ip: Forwarding\nIp: 1\n").is_ok());
  // This process's own namespace has the counter.
  EXPECT_TRUE(tcp_retransmitted_segments().is_ok());
}

}  // namespace
}  // namespace omnib
