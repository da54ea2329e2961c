#include "engine/omni/direct_lanes.h"

#include <gtest/gtest.h>

namespace omnib {
namespace {

TEST(DirectLanes, TwoLanesOnlyWhereEveryWorkerHasTwoCores) {
  EXPECT_EQ(direct_route_lanes(nullptr, 1, 2).value(), 2);
  EXPECT_EQ(direct_route_lanes(nullptr, 4, 8).value(), 2);
  EXPECT_EQ(direct_route_lanes(nullptr, 2, 2).value(), 1);
  EXPECT_EQ(direct_route_lanes(nullptr, 4, 2).value(), 1);
  EXPECT_EQ(direct_route_lanes(nullptr, 5, 9).value(), 1);
  EXPECT_EQ(direct_route_lanes("", 4, 2).value(), 1);  // set but empty: as unset
}

TEST(DirectLanes, TheVariableForcesEither) {
  EXPECT_EQ(direct_route_lanes("1", 1, 64).value(), 1);
  EXPECT_EQ(direct_route_lanes("2", 8, 2).value(), 2);
  for (const char* bad : {"0", "3", "two", "1 ", "-1"}) {
    auto r = direct_route_lanes(bad, 1, 2);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_NE(r.status().message().find("is not a lane count: set it to 1 or 2"), std::string::npos) << bad;
  }
}

TEST(DirectLanes, ThisProcessHasACore) { EXPECT_GE(usable_cores(), 1); }

}  // namespace
}  // namespace omnib
