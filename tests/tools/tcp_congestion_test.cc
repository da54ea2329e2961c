#include "tools/net/tcp_congestion.h"

#include <gtest/gtest.h>

namespace omnib {
namespace {

TEST(TcpCongestion, HostMeansTheHostsDefault) {
  auto cc = resolve_tcp_congestion("host", "bbr", "reno bbr cubic");
  ASSERT_TRUE(cc.is_ok()) << cc.status().message();
  EXPECT_EQ(cc.value(), "bbr");
}

TEST(TcpCongestion, ANamedOneMustBeLoaded) {
  auto cubic = resolve_tcp_congestion("cubic", "bbr", "reno bbr cubic");
  ASSERT_TRUE(cubic.is_ok());
  EXPECT_EQ(cubic.value(), "cubic");
  // A prefix of a loaded name is not that name.
  auto cub = resolve_tcp_congestion("cub", "bbr", "reno bbr cubic");
  ASSERT_FALSE(cub.is_ok());
  EXPECT_EQ(cub.status().code(), Code::kUsage);
  auto vegas = resolve_tcp_congestion("vegas", "bbr", "reno bbr cubic");
  ASSERT_FALSE(vegas.is_ok());
  EXPECT_EQ(vegas.status().code(), Code::kUsage);
  EXPECT_NE(vegas.status().message().find("reno bbr cubic"), std::string::npos) << vegas.status().message();
  EXPECT_NE(vegas.status().message().find("modprobe tcp_vegas"), std::string::npos) << vegas.status().message();
}

TEST(TcpCongestion, AnUnreadableHostDefaultSaysToNameOne) {
  auto cc = resolve_tcp_congestion("host", "", "");
  ASSERT_FALSE(cc.is_ok());
  EXPECT_EQ(cc.status().code(), Code::kUnavailable);
  EXPECT_NE(cc.status().message().find("--tcp-cc"), std::string::npos) << cc.status().message();
}

// This host's own files: whatever it runs is among what it has loaded.
TEST(TcpCongestion, ThisHostsDefaultResolves) {
  if (current_tcp_congestion().empty()) GTEST_SKIP() << "no /proc/sys/net/ipv4/tcp_congestion_control here";
  auto cc = resolve_tcp_congestion("host");
  ASSERT_TRUE(cc.is_ok()) << cc.status().message();
  EXPECT_EQ(cc.value(), current_tcp_congestion());
}

}  // namespace
}  // namespace omnib
