// The CI soak (ctest -L soak): 8 workers and 2 aggregators run omni on 4 KiB
// tensors for 45 s, every call checked, and no process may grow: resident
// memory within kRssGrowthAllowance (2 MiB), threads and descriptors the same
// at the end as at the first timed call. That the check catches leaks is
// shown in tests/e2e/duration_e2e_test.cc (SoakCheckCatches).
#include <gtest/gtest.h>

#include "tests/support/soak_check.h"

namespace omnib {
namespace {

TEST(Soak, EightWorkersAndTwoAggregatorsStayFlat) {
  auto soak = testing::run_soak(testing::omni_bench_binary(),
                                {"--nodes", "8", "--aggregators", "2", "--algo", "omni", "--sizes", "4K", "--duration",
                                 "45s", "--checkpoint-interval", "15s", "-T", "60"},
                                {}, 240);
  ASSERT_TRUE(soak.resources.has_value());
  const ResourcesReport& r = *soak.resources;
  EXPECT_GT(r.calls, 1000u) << "too few calls to judge growth";
  ASSERT_EQ(r.roles.size(), 3u) << "launcher, workers and aggregators";
  for (const auto& role : r.roles) {
    EXPECT_LE(std::llabs(role.rss_bytes.change), static_cast<int64_t>(kRssGrowthAllowance))
        << role.role << " rank " << role.rss_bytes.rank;
    EXPECT_EQ(role.threads.change, 0) << role.role << " rank " << role.threads.rank;
    EXPECT_EQ(role.fds.change, 0) << role.role << " rank " << role.fds.rank;
  }
  EXPECT_TRUE(soak.grew.empty()) << soak.grew.front();
  EXPECT_EQ(soak.doc["results"][0]["correct"], true);
  EXPECT_NE(soak.cli.out.find("# resources: flat"), std::string::npos) << soak.cli.out;
}

}  // namespace
}  // namespace omnib
