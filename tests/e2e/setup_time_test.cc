// Link set-up time (tools/measure/setup_time.h): rank 0 gets the maximum
// over ranks of each algorithm's set-up, a rank that sends something else
// is refused, and a real run carries the figure in every record and in the
// table's footer.
#include "tools/measure/setup_time.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "engine/bootstrap/tcp_store.h"
#include "engine/build_features.h"
#include "tests/support/cli_runner.h"
#include "tests/support/store_peer.h"

namespace omnib {
namespace {

using nlohmann::json;

// Runs max_setup_us_over_ranks on `times.size()` ranks (threads sharing a
// store); returns what each rank got.
std::vector<Result<std::vector<double>>> gather(const std::vector<std::vector<double>>& times) {
  auto server = TcpStoreServer::start({"127.0.0.1", 0}, testing::test_token()).take();
  const int world = static_cast<int>(times.size());
  const auto started = std::chrono::steady_clock::now();
  std::vector<Result<std::vector<double>>> got(times.size(), internal_error("not run"));
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r)
    ranks.emplace_back([&, r] {
      auto c = TcpStoreClient::connect(server->address(), testing::test_token(), std::chrono::seconds(10));
      ASSERT_TRUE(c.is_ok()) << c.status().message();
      const auto& mine = times[static_cast<size_t>(r)];
      got[static_cast<size_t>(r)] = max_setup_us_over_ranks(*c.value(), r, world, mine, started);
    });
  for (auto& t : ranks) t.join();
  return got;
}

TEST(SetupTime, RankZeroGetsTheMaximumOfEachAlgorithm) {
  // Each algorithm's slowest rank is another one; the last ran nowhere.
  const auto got = gather({{10, 300, 0}, {250, 20, 0}, {30, 40, 0}});
  ASSERT_TRUE(got[0].is_ok()) << got[0].status().message();
  EXPECT_EQ(got[0].value(), (std::vector<double>{250, 300, 0}));
  for (size_t r = 1; r < got.size(); ++r) {
    ASSERT_TRUE(got[r].is_ok()) << got[r].status().message();
    EXPECT_TRUE(got[r].value().empty());
  }
}

TEST(SetupTime, ARankWithAnotherListOfAlgorithmsIsRefused) {
  const auto got = gather({{10, 20}, {30}});
  ASSERT_FALSE(got[0].is_ok());
  EXPECT_EQ(got[0].status().code(), Code::kInternal);
  EXPECT_NE(got[0].status().message().find("gather/setup/1"), std::string::npos) << got[0].status().message();
}

// A time no rank can have measured (longer than rank 0 has run) is
// nonsense from whoever holds the job token, never the maximum.
TEST(SetupTime, AnImpossibleTimeIsRefusedNamingTheRank) {
  const auto got = gather({{10, 20}, {30, 1e308}});
  ASSERT_FALSE(got[0].is_ok());
  EXPECT_EQ(got[0].status().code(), Code::kInternal);
  EXPECT_NE(got[0].status().message().find("rank 1 sent set-up times"), std::string::npos)
      << got[0].status().message();
}

// A real run of two sizes: every record that ran has the set-up time of its
// algorithm, the same at both sizes; a skipped one (nccl in a build without
// it) has none; the table's footer names every algorithm that ran.
TEST(SetupTimeEndToEnd, EveryRecordAndTheTableCarryIt) {
  const std::string path = testing::temp_path("setup.json");
  const std::string algos = std::string("omni,ring,sparcml-split,oktopk") + (OMNIB_WITH_NCCL ? "" : ",nccl");
  const auto r = testing::run_cli({"allreduce", "--algo", algos, "--nodes", "3",
                                   "-b", "64K", "-e", "128K", "--density", "0.05", "-n", "2", "-w", "0", "-T", "20",
                                   "-J", path});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json doc = testing::read_json(path);
  std::map<std::string, double> setup;
  size_t ran = 0;
  for (const auto& rec : doc["results"]) {
    const std::string algo = rec["algo"];
    if (rec.value("skipped", false)) {
      EXPECT_FALSE(rec.contains("setup_us")) << algo;
      continue;
    }
    ++ran;
    ASSERT_TRUE(rec.contains("setup_us")) << algo;
    const double us = rec["setup_us"].get<double>();
    EXPECT_GT(us, 0) << algo;
    if (setup.count(algo)) {
      EXPECT_EQ(us, setup[algo]) << algo << ": one set-up per run";
    }
    setup[algo] = us;
  }
  EXPECT_EQ(setup.size(), 4u);
  EXPECT_EQ(ran, 8u);
  const size_t footer = r.out.find("# Link set-up          : ");
  ASSERT_NE(footer, std::string::npos) << r.out;
  const std::string line = r.out.substr(footer, r.out.find('\n', footer) - footer);
  for (const auto& [algo, us] : setup) EXPECT_NE(line.find(" " + algo + " "), std::string::npos) << line;
  EXPECT_EQ(line.find("nccl"), std::string::npos) << line;
}

}  // namespace
}  // namespace omnib
