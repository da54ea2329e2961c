#include "tools/common/size_parse.h"

#include <gtest/gtest.h>

#include "tools/common/stats.h"

namespace omnib {
namespace {

TEST(SizeParse, BinarySuffixes) {
  EXPECT_EQ(parse_size("0").value(), 0u);
  EXPECT_EQ(parse_size("4096").value(), 4096u);
  EXPECT_EQ(parse_size("1K").value(), 1024u);
  EXPECT_EQ(parse_size("64M").value(), 64u << 20);
  EXPECT_EQ(parse_size("2G").value(), 2ull << 30);
  EXPECT_EQ(parse_size("8m").value(), 8u << 20);
  EXPECT_EQ(parse_size("64MB").value(), 64u << 20);
}

TEST(SizeParse, RejectsBadInputWithAHint) {
  for (const char* bad : {"", "-1", "1X", "M", "1.5M", "12 ", "1KK"}) {
    auto r = parse_size(bad);
    EXPECT_FALSE(r.is_ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kUsage);
  }
  EXPECT_NE(parse_size("99999999999999999999").status().message().find("overflow"), std::string::npos);
  EXPECT_NE(parse_size("99999999999G").status().message().find("overflow"), std::string::npos);
}

TEST(SizeParse, FormatsExactBinarySizes) {
  EXPECT_EQ(format_size(64u << 20), "64M");
  EXPECT_EQ(format_size(1000), "1000");
  EXPECT_EQ(format_size(3072), "3K");
}

TEST(Stats, Summaries) {
  TimeStats s = summarize({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_NEAR(s.stdev, 1.5811388, 1e-6);
  EXPECT_DOUBLE_EQ(s.p95, 4.8);
  EXPECT_NEAR(s.p99, 4.96, 1e-12);
  TimeStats one = summarize({7});
  EXPECT_EQ(one.stdev, 0);
  EXPECT_EQ(one.p99, 7);
  EXPECT_EQ(summarize({}).median, 0);
}

}  // namespace
}  // namespace omnib
