// The CI soak (ctest -L soak): 8 workers and 2 aggregators run omni on 4 KiB
// tensors for 45 s, every call checked, and no process may grow: the
// resources verdict (tools/measure/resource_verdict.h) must find no trend
// of resident memory over the calls and the same threads and descriptors at
// the end as after the first timed call. The same soak of the sabotage
// build, whose omni leaks 1 KiB per call, must be found to grow: the check
// catches what it is there for (the short runs of
// tests/e2e/duration_e2e_test.cc, SoakCheckCatches, show it for descriptors
// too).
#include <gtest/gtest.h>

#include "tests/support/soak_check.h"

namespace omnib {
namespace {

const std::vector<std::string> kSoakArgs = {"--nodes",    "8",   "--aggregators",          "2",   "--algo",
                                            "omni",       "--sizes", "4K",                 "--duration", "45s",
                                            "--checkpoint-interval", "15s", "-T", "60"};

TEST(Soak, EightWorkersAndTwoAggregatorsStayFlat) {
  auto soak = testing::run_soak(testing::omni_bench_binary(), kSoakArgs, {}, 240);
  ASSERT_TRUE(soak.resources.has_value());
  const ResourcesReport& r = *soak.resources;
  EXPECT_GT(r.calls, 1000u) << "too few calls to judge growth";
  ASSERT_EQ(r.roles.size(), 3u) << "launcher, workers and aggregators";
  EXPECT_EQ(r.verdict.verdict, ResourceVerdict::kFlat) << soak.cli.out;
  EXPECT_TRUE(soak.grew.empty()) << soak.grew.front();
  EXPECT_EQ(soak.doc["results"][0]["correct"], true);
  EXPECT_NE(soak.cli.out.find("# resources: flat"), std::string::npos) << soak.cli.out;
}

TEST(Soak, CatchesALeakOfOneKibPerCall) {
  auto soak = testing::run_soak(testing::sabotage_binary(), kSoakArgs,
                                {"OMNIB_SABOTAGE_OMNI=leak-memory", "OMNIB_SABOTAGE_LEAK_BYTES=1024"}, 240);
  ASSERT_TRUE(soak.resources.has_value());
  EXPECT_EQ(soak.resources->verdict.verdict, ResourceVerdict::kGrew) << soak.cli.out;
  bool named = false;
  for (const auto& g : soak.grew) named |= g.rfind("worker rss +", 0) == 0 || g.rfind("aggregator rss +", 0) == 0;
  EXPECT_TRUE(named) << soak.cli.out;
  EXPECT_NE(soak.cli.out.find("# resources: GREW: "), std::string::npos) << soak.cli.out;
}

}  // namespace
}  // namespace omnib
