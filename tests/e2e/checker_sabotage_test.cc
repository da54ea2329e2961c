// The correctness check is only a check once it has caught a broken
// algorithm: four sabotaged algorithms (tests/sabotage/), each in every
// position of an --algo list, in and out of place, at densities 0.01, 0.5
// and 1, on 2 and 4 ranks, and in the 16-bit types. Every one is caught
// (exit 3, its row wrong) and the correct algorithms beside it are still
// reported correct.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/cli_runner.h"

namespace omnib {
namespace {

using nlohmann::json;

struct SabotageCase {
  std::string sabotage;
  int position;  // where it sits in the list of three
  bool inplace;
  std::string density;
  int nodes;
};

std::string describe(const SabotageCase& c) {
  std::string d = c.density;
  for (auto& ch : d)
    if (ch == '.') ch = '_';
  std::string s = c.sabotage.substr(std::string("sabotage-").size());
  return s + "_pos" + std::to_string(c.position) + (c.inplace ? "_inplace" : "_outofplace") + "_d" + d + "_n" +
         std::to_string(c.nodes);
}

std::string case_name(const ::testing::TestParamInfo<SabotageCase>& info) { return describe(info.param); }

void PrintTo(const SabotageCase& c, std::ostream* os) { *os << describe(c); }

std::vector<SabotageCase> all_cases() {
  std::vector<SabotageCase> cases;
  for (const char* s : {"sabotage-noop", "sabotage-identity", "sabotage-corrupt", "sabotage-tail"})
    for (int position : {0, 1, 2})
      for (bool inplace : {false, true})
        for (const char* d : {"0.01", "0.5", "1"})
          for (int nodes : {2, 4}) cases.push_back({s, position, inplace, d, nodes});
  return cases;
}

class SabotageIsCaught : public ::testing::TestWithParam<SabotageCase> {};

TEST_P(SabotageIsCaught, EveryCallIsChecked) {
  const SabotageCase& c = GetParam();
  std::vector<std::string> algos = {"omni", "ring"};
  algos.insert(algos.begin() + c.position, c.sabotage);
  std::string list;
  for (const auto& a : algos) list += (list.empty() ? "" : ",") + a;
  const std::string out = testing::temp_path("out.json");
  std::vector<std::string> args{"allreduce", "--algo", list, "--nodes", std::to_string(c.nodes), "-b", "1M", "-e",
                                "1M", "--density", c.density, "-n", "3", "-w", "1", "-T", "20", "-J", out};
  if (c.inplace) args.push_back("--inplace");
  auto r = testing::run_binary(testing::sabotage_binary(), args, {}, 120);
  ASSERT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("WRONG in"), std::string::npos) << r.out;
  const json doc = testing::read_json(out);
  ASSERT_EQ(doc["results"].size(), 3u);
  for (const auto& rec : doc["results"]) {
    const std::string algo = rec["algo"];
    ASSERT_TRUE(rec["checked"].get<bool>()) << algo;
    EXPECT_EQ(rec["calls_checked"], 4) << algo;
    if (algo == c.sabotage) {
      EXPECT_FALSE(rec["correct"].get<bool>()) << algo;
      EXPECT_GT(rec["wrong_elements"].get<uint64_t>(), 0u) << algo;
      // The corrupt one breaks its third call only; the others every call.
      EXPECT_EQ(rec["wrong_calls"], c.sabotage == "sabotage-corrupt" ? 1 : 4) << algo;
      if (c.sabotage == "sabotage-corrupt") EXPECT_EQ(rec["first_wrong_call"], 2);
    } else {
      EXPECT_TRUE(rec["correct"].get<bool>()) << algo << " " << rec.dump();
      EXPECT_EQ(rec["wrong_calls"], 0) << algo;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Grid, SabotageIsCaught, ::testing::ValuesIn(all_cases()), case_name);

// The 16-bit types: the poison (0xFFFF, a NaN in bf16 and in half) shows an
// unwritten output, and elements are compared at their own size.
struct SixteenBitCase {
  std::string sabotage;
  std::string dtype;
  bool inplace;
  std::string density;
};

class SabotageIsCaughtIn16Bit : public ::testing::TestWithParam<SixteenBitCase> {};

TEST_P(SabotageIsCaughtIn16Bit, EveryCallIsChecked) {
  const SixteenBitCase& c = GetParam();
  const std::string out = testing::temp_path("out16.json");
  std::vector<std::string> args{"allreduce", "--algo", "omni," + c.sabotage + ",ring", "--nodes", "3", "-b", "1M",
                                "-e", "1M", "-d", c.dtype, "--density", c.density, "-n", "3", "-w", "1", "-T", "20",
                                "-J", out};
  if (c.inplace) args.push_back("--inplace");
  auto r = testing::run_binary(testing::sabotage_binary(), args, {}, 120);
  ASSERT_EQ(r.exit_code, 3) << r.out << r.err;
  const json doc = testing::read_json(out);
  ASSERT_EQ(doc["results"].size(), 3u);
  for (const auto& rec : doc["results"]) {
    const std::string algo = rec["algo"];
    EXPECT_EQ(rec["config"]["dtype"], c.dtype);
    if (algo != c.sabotage) {
      EXPECT_TRUE(rec["correct"].get<bool>()) << algo << " " << rec.dump();
      continue;
    }
    EXPECT_FALSE(rec["correct"].get<bool>()) << algo;
    EXPECT_EQ(rec["wrong_calls"], c.sabotage == "sabotage-noop" || c.sabotage == "sabotage-tail" ? 4 : 1) << algo;
  }
}

std::vector<SixteenBitCase> sixteen_bit_cases() {
  std::vector<SixteenBitCase> cases;
  for (const char* s : {"sabotage-noop", "sabotage-corrupt", "sabotage-tail", "sabotage-one-element"})
    for (const char* dtype : {"bf16", "half"})
      for (bool inplace : {false, true})
        for (const char* d : {"0.01", "1"}) cases.push_back({s, dtype, inplace, d});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Grid, SabotageIsCaughtIn16Bit, ::testing::ValuesIn(sixteen_bit_cases()),
                         [](const ::testing::TestParamInfo<SixteenBitCase>& info) {
                           std::string name = info.param.sabotage.substr(std::string("sabotage-").size()) + "_" +
                                              info.param.dtype + (info.param.inplace ? "_inplace" : "_outofplace") +
                                              "_d" + info.param.density;
                           for (auto& ch : name)
                             if (ch == '.' || ch == '-') ch = '_';
                           return name;
                         });

// At density 0 the sum is zero everywhere: only the poison shows that an
// algorithm wrote nothing. 0xFFFF is a NaN in bf16 and in half, never a sum.
TEST(SabotageNoop, PoisonShowsAnUnwrittenZeroSumInEveryFloatType) {
  for (const char* dtype : {"float", "bf16", "half"}) {
    SCOPED_TRACE(dtype);
    auto r = testing::run_binary(testing::sabotage_binary(),
                                 {"allreduce", "--algo", "sabotage-noop", "--nodes", "2", "-b", "64K", "-e", "64K",
                                  "-d", dtype, "--density", "0", "-n", "2", "-w", "0", "-T", "20"},
                                 {}, 60);
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  }
}

// One element of one call, flipped in its lowest bit, is counted as exactly
// one wrong element per rank in every type: the comparison runs at the
// element's size (a 4-byte comparison of 2-byte elements would miscount).
TEST(SabotageOneElement, CountedOncePerRankInEveryType) {
  for (const char* dtype : {"float", "int32", "bf16", "half"}) {
    SCOPED_TRACE(dtype);
    const std::string out = testing::temp_path("one-element.json");
    auto r = testing::run_binary(testing::sabotage_binary(),
                                 {"allreduce", "--algo", "sabotage-one-element", "--nodes", "3", "-b", "64K", "-e",
                                  "64K", "-d", dtype, "--density", "0.5", "-n", "3", "-w", "1", "-T", "20", "-J", out},
                                 {}, 60);
    ASSERT_EQ(r.exit_code, 3) << r.out << r.err;
    const json doc = testing::read_json(out);
    ASSERT_EQ(doc["results"].size(), 1u);
    EXPECT_EQ(doc["results"][0]["wrong_elements"], 3) << doc["results"][0].dump();
    EXPECT_EQ(doc["results"][0]["wrong_calls"], 1);
  }
}

// What the check cannot see, documented in docs/algorithms.md: at density 0
// and on a single rank the sum equals every input, so an algorithm that
// returns its input passes. Such runs are never evidence on their own.
TEST(CheckerBlindSpots, DensityZeroAndOneRankCannotTellIdentityFromSum) {
  for (const auto& extra : std::vector<std::vector<std::string>>{{"--nodes", "4", "--density", "0"},
                                                                  {"--nodes", "1", "--density", "0.5"}}) {
    std::vector<std::string> args{"allreduce", "--algo", "sabotage-identity", "-b", "64K", "-e", "64K",
                                  "-n", "2", "-w", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = testing::run_binary(testing::sabotage_binary(), args, {}, 60);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  }
}

// -c 0 records nothing as correct: "checked": false, "correct": null, and
// the table says unchecked.
TEST(CheckerOff, UncheckedIsNeverCorrect) {
  const std::string out = testing::temp_path("unchecked.json");
  auto r = testing::run_binary(testing::sabotage_binary(),
                               {"allreduce", "--algo", "sabotage-noop,omni", "--nodes", "2", "-b", "64K", "-e", "64K",
                                "-n", "2", "-w", "0", "-c", "0", "-J", out},
                               {}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("unchecked"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(" OK"), std::string::npos) << r.out;
  const json doc = testing::read_json(out);
  for (const auto& rec : doc["results"]) {
    EXPECT_FALSE(rec["checked"].get<bool>());
    EXPECT_TRUE(rec["correct"].is_null()) << rec.dump();
    EXPECT_EQ(rec["calls_checked"], 0);
  }
}

}  // namespace
}  // namespace omnib
