// The omni engine's route rule (engine/omni/route_choice.h): every rank
// applies it to the same traffic, so it must be a pure function of it.
#include "engine/omni/route_choice.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace omnib {
namespace {

constexpr RoutePolicy kAuto = RoutePolicy::kAuto, kShards = RoutePolicy::kShards, kDirect = RoutePolicy::kDirect;

// 4 workers whose non-zeros do not overlap: each block's sum is one worker's
// block, so the results are as big as the inputs (R = I).
constexpr RouteTraffic kDisjoint{1000, 1000};
// Every worker holds the same blocks: the results are a quarter of the inputs.
constexpr RouteTraffic kIdentical{1000, 250};

TEST(RouteChoice, DisjointNonZerosGoDirectAndIdenticalOnesThroughShards) {
  EXPECT_EQ(next_route(kAuto, kShards, kDisjoint, 4, true), kDirect);
  EXPECT_EQ(next_route(kAuto, kDirect, kDisjoint, 4, true), kDirect);
  EXPECT_EQ(next_route(kAuto, kShards, kIdentical, 4, true), kShards);
  EXPECT_EQ(next_route(kAuto, kDirect, kIdentical, 4, true), kShards);
}

TEST(RouteChoice, TheBreakEvenPointIsWhereBothRoutesSendTheSame) {
  // Direct: (n-1) I = 3000; shards: I (n-1)/n + R (n-1) = 750 + 3R: even at
  // R = 750, where direct is taken (it spends less CPU).
  EXPECT_EQ(next_route(kAuto, kShards, RouteTraffic{1000, 900}, 4, true), kDirect);
  EXPECT_EQ(next_route(kAuto, kShards, RouteTraffic{1000, 750}, 4, true), kDirect);
  EXPECT_EQ(next_route(kAuto, kShards, RouteTraffic{1000, 600}, 4, true), kShards);
  // Two workers: direct sends I, shards I/2 + R: even at R = I/2.
  EXPECT_EQ(next_route(kAuto, kShards, RouteTraffic{1000, 600}, 2, true), kDirect);
  EXPECT_EQ(next_route(kAuto, kShards, RouteTraffic{1000, 400}, 2, true), kShards);
}

TEST(RouteChoice, TheRouteTakenKeepsAMarginSoItDoesNotFlipOnFraming) {
  // At 4 workers and I = 1000, direct is taken from R = 48000 / (17 * 4)
  // = 705.9 and kept down to 48000 / (18 * 4) = 666.7: between the two the
  // route stays what it was.
  for (uint64_t results : {670u, 690u, 705u}) {
    SCOPED_TRACE(results);
    EXPECT_EQ(next_route(kAuto, kShards, RouteTraffic{1000, results}, 4, true), kShards);
    EXPECT_EQ(next_route(kAuto, kDirect, RouteTraffic{1000, results}, 4, true), kDirect);
  }
  EXPECT_EQ(next_route(kAuto, kShards, RouteTraffic{1000, 710}, 4, true), kDirect);
  EXPECT_EQ(next_route(kAuto, kDirect, RouteTraffic{1000, 660}, 4, true), kShards);
}

TEST(RouteChoice, ForcedRoutesAreObeyedAndDirectNeedsAJobThatCanTakeIt) {
  EXPECT_EQ(next_route(kShards, kShards, kDisjoint, 4, true), kShards);
  EXPECT_EQ(next_route(kDirect, kDirect, kIdentical, 4, true), kDirect);
  EXPECT_EQ(next_route(kAuto, kShards, kDisjoint, 4, false), kShards);
  EXPECT_EQ(next_route(kDirect, kDirect, kDisjoint, 4, false), kShards);
}

TEST(RouteChoice, HugeTrafficNeitherOverflowsNorWraps) {
  const RouteTraffic huge{UINT64_MAX / 2, UINT64_MAX / 2};
  EXPECT_EQ(next_route(kAuto, kShards, huge, 4, true), kDirect);
  EXPECT_EQ(next_route(kAuto, kDirect, huge, 64, true), kDirect);
  EXPECT_EQ(traffic_tag(1000), 1000u);
  EXPECT_EQ(traffic_tag(uint64_t{1} << 40), UINT32_MAX);
}

}  // namespace
}  // namespace omnib
