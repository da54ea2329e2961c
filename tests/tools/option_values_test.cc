// Option values that parse but mean nothing (tools/common/option_values.h):
// empty values, NaN and infinity for numbers, integers past their range or,
// unsigned, negative. CLI11 takes them all (it saturates 2^64 to 2^64-1 and
// wraps -1 to it); the check refuses each, naming the option.
#include "tools/common/option_values.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace omnib {
namespace {

// check_option_values after parsing `args` with one option of each type.
Status verdict(std::vector<std::string> args) {
  CLI::App app;
  double ratio = 1;
  uint64_t seed = 1;
  int64_t offset = 0;
  std::string name = "x";
  bool force = false;
  app.add_option("--ratio", ratio);
  app.add_option("--seed", seed);
  app.add_option("--offset", offset);
  app.add_option("--name", name);
  app.add_flag("--force", force);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses a reversed vector
  app.parse(reversed);
  return check_option_values(app);
}

TEST(OptionValues, MeaningfulValuesPass) {
  EXPECT_TRUE(verdict({}).is_ok());
  EXPECT_TRUE(verdict({"--ratio", "0.5", "--seed", "18446744073709551615", "--offset", "-9223372036854775808",
                       "--name", "n", "--force"})
                  .is_ok());
}

TEST(OptionValues, ValuesThatMeanNothingAreUsageErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--ratio", "nan"}, "--ratio 'nan' is not a finite number"},
      {{"--ratio", "-inf"}, "--ratio '-inf' is not a finite number"},
      {{"--ratio", "1e999"}, "--ratio '1e999' is not a finite number"},
      {{"--seed", "18446744073709551616"}, "--seed '18446744073709551616' is out of range"},
      {{"--seed", "-1"}, "--seed '-1' is negative"},
      {{"--offset", "9223372036854775808"}, "--offset '9223372036854775808' is out of range"},
      {{"--name", ""}, "--name '' is empty"},
      {{"--ratio", ""}, "--ratio '' is empty"},
  };
  for (const auto& [args, message] : cases) {
    const Status s = verdict(args);  // CLI11 takes every one of them
    EXPECT_EQ(s.code(), Code::kUsage) << args[0] << " " << args[1];
    EXPECT_NE(s.message().find(message), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace omnib
