// Rank 0 checks what other ranks report through the store (anyone holding
// the job token can write there): every number finite and within what the
// run could have produced, or the run fails naming the rank. The unit tests
// feed parse_rank_reports reports with one absurd field each; the end-to-end
// test plays a client holding the token that sends rank 1's results first.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "engine/bootstrap/tcp_store.h"
#include "tests/support/cli_runner.h"
#include "tests/support/rank_launcher.h"
#include "tests/support/store_peer.h"
#include "tools/measure/peer_bounds.h"
#include "tools/measure/rank_report.h"
#include "tools/measure/resource_series.h"
#include "tools/trace/trace_gather.h"

namespace omnib {
namespace {

using nlohmann::json;

constexpr uint64_t kMax64 = UINT64_MAX;

// What a rank of a 2-call run of one algorithm honestly reports.
RankReport honest_report(int rank) {
  RankReport r;
  RankSamples s(1);
  s.times_us[0] = {100, 120};
  s.cpu[0] = {50, 10};
  s.calls_checked = 2;
  s.wire = ByteCounters{4096, 4096, 4, 4};
  r.algos.push_back(s);
  r.resources.role = kWorkerRole;
  r.resources.rank = rank;
  r.resources.start = {1u << 20, 1u << 20, 4, 10};
  r.resources.end = r.resources.start;
  r.resources.calls = 2;
  r.resources.seconds = 0.01;
  r.resources.rounds = 2;
  r.resources.series = {{0, 1u << 20, 4, 10}, {1, 1u << 20, 4, 10}};
  return r;
}

// Rank 0's verdict on rank 0's honest report and rank 1's `report`, ten
// seconds into a run on tensors of 1024 elements.
Status verdict(const json& rank1) {
  const std::vector<std::string> all{to_json(honest_report(0)).dump(), rank1.dump()};
  return parse_rank_reports(all, "cfg0/results", {"omni"}, 1, 2, PeerBounds::for_run(10, 1024)).status();
}

TEST(PeerBounds, AnHonestReportPasses) {
  const Status s = verdict(to_json(honest_report(1)));
  EXPECT_TRUE(s.is_ok()) << s.message();
}

TEST(PeerBounds, EveryAbsurdFieldIsRefusedNamingTheRank) {
  struct Absurd {
    const char* what;
    json::json_pointer field;
    json value;
  };
  const std::vector<Absurd> cases = {
      {"a call time of 1e308 us", json::json_pointer("/algos/0/t/0/1"), 1e308},
      {"a call time longer than the run (11.1 s with slack)", json::json_pointer("/algos/0/t/0/0"), 12e6},
      {"a negative call time", json::json_pointer("/algos/0/t/0/0"), -5.0},
      {"CPU time of 1e300 us", json::json_pointer("/algos/0/cpu/0/0"), 1e300},
      {"2^64-1 bytes sent", json::json_pointer("/algos/0/wire/0"), kMax64},
      {"2^64-1 frames sent", json::json_pointer("/algos/0/wire/1"), kMax64},
      {"2^64-1 calls checked", json::json_pointer("/algos/0/checked"), kMax64},
      {"more wrong elements than the tensor has", json::json_pointer("/algos/0/wrong"), json::array({{0, 5000}})},
      {"2^64-1 link bytes", json::json_pointer("/algos/0/link"), kMax64},
      {"2^64-1 bytes resident", json::json_pointer("/resources/end/rss_bytes"), kMax64},
      {"2^64-1 threads", json::json_pointer("/resources/start/threads"), kMax64},
      {"a run longer than rank 0's", json::json_pointer("/resources/seconds"), 1e9},
      {"2^64-1 bytes resident after a round", json::json_pointer("/resources/series/1/1"), kMax64},
      {"rounds that go back", json::json_pointer("/resources/series/1/0"), 0},
      {"a round past the rounds made", json::json_pointer("/resources/series/1/0"), 2},
  };
  for (const auto& c : cases) {
    json report = to_json(honest_report(1));
    report[c.field] = c.value;
    const Status s = verdict(report);
    EXPECT_EQ(s.code(), Code::kInternal) << c.what;
    EXPECT_NE(s.message().find("rank 1 sent a report rank 0 cannot use"), std::string::npos) << c.what << ": "
                                                                                               << s.message();
  }
}

// Rank 0 fits a slope over every pair of a series' points: a series longer
// than any sampler keeps would cost it quadratic time.
TEST(PeerBounds, ASeriesLongerThanAnySamplerKeepsIsRefused) {
  RankReport r = honest_report(1);
  r.resources.rounds = 1000;
  r.resources.series.clear();
  for (uint64_t i = 0; i <= kMaxSeriesPoints; ++i) r.resources.series.push_back({i, 1u << 20, 4, 10});
  const Status s = verdict(to_json(r));
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find("field 'series' is 129 points"), std::string::npos) << s.message();
}

// Nesting past any report is refused before it is parsed: call times
// nested 300000 deep overflowed the stack when rank 0 copied them.
TEST(PeerBounds, DeepNestingIsRefusedNotParsed) {
  const size_t n = 300000;
  const std::string deep = R"({"algos": [{"t": [)" + std::string(n, '[') + std::string(n, ']') + "]}]}";
  const std::vector<std::string> all{to_json(honest_report(0)).dump(), deep};
  const Status s = parse_rank_reports(all, "cfg0/results", {"omni"}, 1, 2, PeerBounds::for_run(10, 1024)).status();
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find("rank 1 sent a report"), std::string::npos) << s.message();
}

// A trace part count of 2^64-1 ("-1" to std::stoul) made every rank loop
// through that many empty gathers: refused at once, naming the rank.
TEST(PeerBounds, AnAbsurdTracePartCountIsRefusedNamingTheRank) {
  auto server = TcpStoreServer::start({"127.0.0.1", 0}, testing::test_token()).take();
  Result<std::vector<RankTrace>> got = internal_error("not run");
  std::thread rank0([&] {
    auto c = TcpStoreClient::connect(server->address(), testing::test_token(), std::chrono::seconds(10));
    ASSERT_TRUE(c.is_ok()) << c.status().message();
    RankTrace mine;
    got = gather_rank_traces(*c.value(), "cfg0/trace", 0, 2, mine);
  });
  auto forger = TcpStoreClient::connect(server->address(), testing::test_token(), std::chrono::seconds(10));
  ASSERT_TRUE(forger.is_ok()) << forger.status().message();
  EXPECT_TRUE(forger.value()->gather("cfg0/trace/parts", 1, 2, "-1", GatherTo::kRoot).is_ok());
  rank0.join();
  ASSERT_FALSE(got.is_ok());
  EXPECT_EQ(got.status().code(), Code::kInternal);
  EXPECT_NE(got.status().message().find("rank 1 sent a trace part count"), std::string::npos)
      << got.status().message();
}

// A client holding the job token gathers rank 1's part of the first
// configuration's results before rank 1 does: times of 1e308 us, counters
// and memory of 2^64-1. When rank 0 gets that part, it must fail naming
// rank 1, never write it. The real rank 1 races the forger: should it reach
// the gather before rank 0, the store refuses its second part and the job
// stops before rank 0 sees the forgery, so the attack is tried until rank 0
// gets it (each try takes about a second).
struct Attack {
  int rank0_code = -1;
  std::string rank0_err, json;
};

Attack forge_rank_one_results() {
  Attack a;
  const std::string json_path = testing::temp_path("out.json");
  const std::string err0 = testing::temp_path("rank0.err");
  auto ranks = testing::start_ranks({"allreduce", "--algo", "omni", "-b", "64K", "-e", "64K", "-n", "2", "-w", "0",
                                     "-T", "20", "-J", json_path},
                                    2, {"OMNIB_JOB_TOKEN=" + testing::test_token().hex()}, {err0, ""}, 1);
  const SocketAddress store{"127.0.0.1", static_cast<uint16_t>(ranks.port)};
  auto client = TcpStoreClient::connect(store, testing::test_token(), std::chrono::seconds(10));
  EXPECT_TRUE(client.is_ok()) << client.status().message();
  if (client.is_ok()) {
    json forged = to_json(honest_report(1));
    forged["algos"][0]["t"] = json::array({json::array({1e308, 1e308})});
    forged["algos"][0]["wire"] = json::array({kMax64, kMax64});
    forged["resources"]["end"]["rss_bytes"] = kMax64;
    auto sent = client.value()->gather("cfg0/results", 1, 2, forged.dump(), GatherTo::kRoot);
    EXPECT_TRUE(sent.is_ok()) << sent.status().message();
  }
  testing::start_held_rank(ranks, 1);
  a.rank0_code = testing::wait_ranks(ranks, std::chrono::seconds(40))[0].code;
  a.rank0_err = testing::slurp(err0);
  a.json = testing::slurp(json_path);
  return a;
}

TEST(PeerBoundsEndToEnd, ATokenHolderSendingNonsenseIsNamed) {
  bool named = false;
  for (int attempt = 0; attempt < 10 && !named; ++attempt) {
    const Attack a = forge_rank_one_results();
    EXPECT_NE(a.rank0_code, 0) << a.rank0_err;
    EXPECT_EQ(a.json.find("1e+308"), std::string::npos) << "the nonsense was written as a result";
    named = a.rank0_err.find("rank 1 sent a report rank 0 cannot use") != std::string::npos;
    if (named) EXPECT_EQ(a.rank0_code, 1) << a.rank0_err;
  }
  EXPECT_TRUE(named) << "in 10 tries rank 0 never got the forged part, or did not name rank 1";
}

}  // namespace
}  // namespace omnib
