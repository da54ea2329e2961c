// The simulated platform's options and the calibration file: parsed,
// sized to the job, bounded; and (with SimGrid) replays that take what the
// links allow, in the order the schedule says.
#include <gtest/gtest.h>

#include "tools/simulate/calibration.h"
#include "tools/simulate/forked_replay.h"
#include "tools/simulate/platform_spec.h"

#include <optional>

namespace omnib {
namespace {

constexpr std::chrono::seconds kReplayLimit{600};

TEST(PlatformSpec, ParsesAndSizesTopologies) {
  auto star = parse_topology("star");
  ASSERT_TRUE(star.is_ok());
  EXPECT_TRUE(fit_to_ranks(star.value(), 1000).is_ok());
  EXPECT_EQ(star.value().text(), "star");

  auto tree = parse_topology("fat-tree");
  ASSERT_TRUE(tree.is_ok());
  ASSERT_TRUE(fit_to_ranks(tree.value(), 1024).is_ok());
  EXPECT_EQ(tree.value().text(), "fat-tree:2;32,32;1,32;1,1");
  auto small = parse_topology("fat-tree");
  ASSERT_TRUE(fit_to_ranks(small.value(), 8).is_ok());
  EXPECT_EQ(small.value().text(), "fat-tree:2;8,1;1,8;1,1");

  auto explicit_tree = parse_topology("fat-tree:2;4,4;1,2;1,2");
  ASSERT_TRUE(explicit_tree.is_ok());
  EXPECT_TRUE(fit_to_ranks(explicit_tree.value(), 16).is_ok());
  EXPECT_FALSE(fit_to_ranks(explicit_tree.value(), 8).is_ok());

  auto torus = parse_topology("torus:4,4,2");
  ASSERT_TRUE(torus.is_ok());
  EXPECT_TRUE(fit_to_ranks(torus.value(), 32).is_ok());
  EXPECT_EQ(torus.value().text(), "torus:4,4,2");

  for (const char* bad : {"ring", "star:4", "fat-tree:0", "fat-tree:2;4;1,2;1,2", "torus:", "torus:2,x"})
    EXPECT_FALSE(parse_topology(bad).is_ok()) << bad;
  auto uneven = parse_topology("fat-tree:4");
  EXPECT_FALSE(fit_to_ranks(uneven.value(), 6).is_ok());
}

TEST(Calibration, RoundTripsAndRefusesNonsense) {
  Calibration c;
  c.latency_factor = 1.7;
  c.bandwidth_factor = 0.93;
  c.incast_factor = 0.84;
  c.rates.scan_s_per_byte = 2e-10;
  c.rates.reduce_s_per_byte = 5e-10;
  c.host = "vm";
  c.command = "omni-bench simulate --calibrate";
  c.made_utc = "2026-11-28T17:00:00Z";
  auto back = calibration_from_json(calibration_to_json(c));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back.value().latency_factor, 1.7);
  EXPECT_EQ(back.value().bandwidth_factor, 0.93);
  EXPECT_EQ(back.value().incast_factor, 0.84);
  EXPECT_EQ(back.value().rates.reduce_s_per_byte, 5e-10);
  EXPECT_EQ(back.value().host, "vm");

  // A file from before the port model has no incast factor: no loss.
  nlohmann::json older = calibration_to_json(c);
  older["network"].erase("incast_factor");
  auto old = calibration_from_json(older);
  ASSERT_TRUE(old.is_ok()) << old.status().message();
  EXPECT_EQ(old.value().incast_factor, 1.0);

  nlohmann::json j = calibration_to_json(c);
  j["network"]["bandwidth_factor"] = 0;
  EXPECT_FALSE(calibration_from_json(j).is_ok());
  j = calibration_to_json(c);
  j["compute"]["reduce_s_per_byte"] = -1;
  EXPECT_FALSE(calibration_from_json(j).is_ok());
  for (double bad : {0.0, 1.2}) {
    j = calibration_to_json(c);
    j["network"]["incast_factor"] = bad;  // a port cannot gain from senders converging
    EXPECT_FALSE(calibration_from_json(j).is_ok()) << bad;
  }
  j = calibration_to_json(c);
  j["calibration_version"] = 99;
  EXPECT_FALSE(calibration_from_json(j).is_ok());
  j = calibration_to_json(c);
  j["network"]["model"] = "LV08";
  EXPECT_FALSE(calibration_from_json(j).is_ok());
}

// 1 MB over a star of 8 Mbit/s links, 1 ms each way per link: the path has
// two links (up, then down), so 2 ms of latency and 1 s of transfer.
TEST(Replay, TakesWhatTheLinksAllowInTheScheduledOrder) {
  if (!simulator_available()) GTEST_SKIP() << "this build lacks SimGrid";
  PlatformSpec star;
  star.link_rate_bps = 8'000'000;
  star.latency_s = 1e-3;
  MessageSchedule one(2);
  one.add(0, 1, 1'000'000, {});
  auto t = replay_in_child(one, star, Calibration{}, kReplayLimit);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_NEAR(t.value().time_s, 1.002, 1e-6);
  EXPECT_EQ(t.value().flows, 1u);

  // The answer goes back once the question has arrived: twice as long.
  MessageSchedule chain(2);
  const uint32_t q = chain.add(0, 1, 1'000'000, {});
  chain.add(1, 0, 1'000'000, {{q, false}});
  EXPECT_NEAR(replay_in_child(chain, star, Calibration{}, kReplayLimit).value().time_s, 2.004, 1e-6);

  // Two at once from one sender share its link; compute delays the send.
  MessageSchedule shared(3);
  shared.add(0, 1, 1'000'000, {});
  shared.add(0, 2, 1'000'000, {}, 0.5);
  EXPECT_NEAR(replay_in_child(shared, star, Calibration{}, kReplayLimit).value().time_s, 2.002, 1e-6);

  // A calibrated bandwidth factor slows every flow.
  Calibration slow;
  slow.bandwidth_factor = 0.5;
  EXPECT_NEAR(replay_in_child(one, star, slow, kReplayLimit).value().time_s, 2.002, 1e-6);
}

}  // namespace
}  // namespace omnib

namespace omnib {
namespace {

// A paced fan-out keeps its sender's link busy: 1000 messages of 2 kB
// one after another to 10 peers take what their bytes take at line rate,
// plus one path's latency, whatever the latency.
TEST(Replay, APacedChainKeepsTheLinkBusy) {
  if (!simulator_available()) GTEST_SKIP() << "this build lacks SimGrid";
  PlatformSpec star;
  star.link_rate_bps = 100'000'000'000;
  star.latency_s = 1e-6;
  MessageSchedule chain(11);
  std::optional<uint32_t> before;
  for (int k = 0; k < 1000; ++k) {
    std::vector<MessageDep> deps;
    if (before) deps.push_back({*before, true});
    before = chain.add(0, 1 + k % 10, 2000, deps);
  }
  auto t = replay_in_child(chain, star, Calibration{}, kReplayLimit);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_NEAR(t.value().time_s, 1000 * 2000 / 12.5e9 + 2e-6, 1e-7);
}

}  // namespace
}  // namespace omnib

namespace omnib {
namespace {

// The port model (converging_ports.h): 1 MB from each of two senders into
// one host over 8 Mbit/s links share its port, 2 s; with an incast factor
// of 0.5 the port runs at half its rate while both feed it, 4 s. One sender
// with two messages in flight, and a protocol that holds its senders to a
// byte budget, keep the whole rate.
TEST(Replay, ConvergingSendersSlowTheirReceiversPort) {
  if (!simulator_available()) GTEST_SKIP() << "this build lacks SimGrid";
  Calibration lossy;
  lossy.incast_factor = 0.5;
  auto time_of = [&](const MessageSchedule& s, const PlatformSpec& platform, const Calibration& c) {
    auto t = replay_in_child(s, platform, c, kReplayLimit);
    EXPECT_TRUE(t.is_ok()) << t.status().message();
    return t.is_ok() ? t.value().time_s : -1;
  };
  PlatformSpec star;
  star.link_rate_bps = 8'000'000;
  MessageSchedule converging(3);
  converging.add(0, 2, 1'000'000, {});
  converging.add(1, 2, 1'000'000, {});
  EXPECT_NEAR(time_of(converging, star, Calibration{}), 2.0, 1e-6);
  EXPECT_NEAR(time_of(converging, star, lossy), 4.0, 1e-6);

  // The port is slowed only while both feed it: 1 MB and 3 MB take 4 s
  // at half rate together (2 MB), then the rest of the 3 MB alone: 2 s.
  // Whichever starts first (a transfer that starts on a slowed port must
  // not keep that rate once the port is free again), and into rank 0 too.
  for (bool long_first : {true, false})
    for (int to : {2, 0}) {
      MessageSchedule uneven(3);
      const int a = to == 2 ? 0 : 1, b = to == 2 ? 1 : 2;
      uneven.add(a, to, long_first ? 3'000'000 : 1'000'000, {});
      uneven.add(b, to, long_first ? 1'000'000 : 3'000'000, {});
      EXPECT_NEAR(time_of(uneven, star, lossy), 6.0, 1e-6) << "long first " << long_first << ", to " << to;
    }

  // A message that starts on a port already slowed goes on at the full
  // rate once it is alone: 0 and 1 send 1 MB each into 3 from 0 s; 2 joins
  // with 2 MB at 0.5 s (after 0.5 MB to 0); the three share half the port
  // until 0's and 1's end at 5.75 s, and 2's last 1.125 MB take 1.125 s.
  MessageSchedule joining(4);
  joining.add(0, 3, 1'000'000, {});
  joining.add(1, 3, 1'000'000, {});
  const uint32_t before = joining.add(2, 0, 500'000, {});
  joining.add(2, 3, 2'000'000, {{before, false}});
  EXPECT_NEAR(time_of(joining, star, lossy), 6.875, 1e-6);

  MessageSchedule one_sender(3);
  one_sender.add(0, 2, 1'000'000, {});
  one_sender.add(0, 2, 1'000'000, {});
  EXPECT_NEAR(time_of(one_sender, star, lossy), 2.0, 1e-6);

  MessageSchedule budgeted = converging;
  budgeted.set_flows_budgeted(true);
  EXPECT_NEAR(time_of(budgeted, star, lossy), 2.0, 1e-6);

  // Two senders into rank 0 of a four-host `topology` at 8 Mbit/s: the
  // time without the model and with it.
  auto into_rank0 = [&](const char* topology, int a, int b) {
    auto platform = parse_topology(topology);
    EXPECT_TRUE(platform.is_ok() && fit_to_ranks(platform.value(), 4).is_ok()) << topology;
    platform.value().link_rate_bps = 8'000'000;
    MessageSchedule two(4);
    two.add(a, 0, 1'000'000, {});
    two.add(b, 0, 1'000'000, {});
    return std::make_pair(time_of(two, platform.value(), Calibration{}), time_of(two, platform.value(), lossy));
  };
  // On a fat tree the port is the leaf switch's link down to the host.
  const auto tree = into_rank0("fat-tree", 1, 2);
  EXPECT_NEAR(tree.first, 2.0, 1e-6);
  EXPECT_NEAR(tree.second, 4.0, 1e-6);
  // On a ring of four (a one-dimensional torus) rank 0 hears from 1 and 3
  // through two links, one sender each: nothing converges, 1 s.
  const auto ring = into_rank0("torus:4", 1, 3);
  EXPECT_NEAR(ring.first, 1.0, 1e-6);
  EXPECT_NEAR(ring.second, 1.0, 1e-6);
}

}  // namespace
}  // namespace omnib
