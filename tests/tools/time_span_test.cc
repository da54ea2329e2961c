// --duration and --checkpoint-interval take lengths of time as --link-delay
// does: a number and a unit; anything else is a usage error naming the flag.
#include "tools/common/time_span.h"

#include <gtest/gtest.h>

namespace omnib {
namespace {

using std::chrono::milliseconds;

const milliseconds kMin{1000}, kMax{int64_t{30} * 24 * 3600 * 1000};

milliseconds parsed(const std::string& text) {
  auto r = parse_time_span("--duration", text, kMin, kMax);
  EXPECT_TRUE(r.is_ok()) << text << ": " << r.status().message();
  return r.is_ok() ? r.value() : milliseconds(-1);
}

TEST(TimeSpan, UnitsFromMillisecondsToHours) {
  EXPECT_EQ(parsed("30s"), milliseconds(30000));
  EXPECT_EQ(parsed("10m"), milliseconds(600000));
  EXPECT_EQ(parsed("2h"), milliseconds(7200000));
  EXPECT_EQ(parsed("1.5h"), milliseconds(5400000));
  EXPECT_EQ(parsed("1500ms"), milliseconds(1500));
  EXPECT_EQ(parsed("90SEC"), milliseconds(90000));
  EXPECT_EQ(parsed("2min"), milliseconds(120000));
  EXPECT_EQ(parsed("1hour"), milliseconds(3600000));
}

TEST(TimeSpan, SeveralUnitsInARowAddUp) {
  EXPECT_EQ(parsed("1h30m"), milliseconds(5400000));
  EXPECT_EQ(parsed("1m1.5s"), milliseconds(61500));
  EXPECT_EQ(parsed("2m500ms"), milliseconds(120500));
  auto r = parse_time_span("--duration", "1h30", kMin, kMax);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("has no unit"), std::string::npos) << r.status().message();
}

TEST(TimeSpan, BadTextIsAUsageErrorNamingTheFlagAndTheForm) {
  for (const char* text : {"30", "", "s", "-1s", "1.2.3s", "10x", "1e3s", "5 s", "1hh", "h1"}) {
    auto r = parse_time_span("--checkpoint-interval", text, kMin, kMax);
    ASSERT_FALSE(r.is_ok()) << text;
    EXPECT_EQ(r.status().code(), Code::kUsage);
    EXPECT_NE(r.status().message().find("--checkpoint-interval"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("30s, 10m, 2h"), std::string::npos) << r.status().message();
  }
}

TEST(TimeSpan, OutOfRangeNamesTheRange) {
  for (const char* text : {"999ms", "0s", "31d", "721h"}) {
    auto r = parse_time_span("--duration", text, kMin, kMax);
    ASSERT_FALSE(r.is_ok()) << text;
    EXPECT_EQ(r.status().code(), Code::kUsage);
  }
  EXPECT_NE(parse_time_span("--duration", "721h", kMin, kMax).status().message().find("between 1s and 720h"),
            std::string::npos);
}

TEST(TimeSpan, FormatsTheShortestExactForm) {
  EXPECT_EQ(format_time_span(milliseconds(7200000)), "2h");
  EXPECT_EQ(format_time_span(milliseconds(90000)), "1m30s");
  EXPECT_EQ(format_time_span(milliseconds(3661000)), "1h1m1s");
  EXPECT_EQ(format_time_span(milliseconds(1500)), "1.5s");
  EXPECT_EQ(format_time_span(milliseconds(500)), "500ms");
  EXPECT_EQ(format_time_span(milliseconds(0)), "0s");
  for (int64_t ms : {1000, 61500, 7200000, 5400000})
    EXPECT_EQ(parsed(format_time_span(milliseconds(ms))), milliseconds(ms)) << ms;
}

}  // namespace
}  // namespace omnib
