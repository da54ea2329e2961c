// The --profile block (tools/report/profile_block.h): the floor and bound
// columns, and each algorithm's CPU time per call against ring's when ring
// ran in the same configuration ('-' when not).
#include "tools/report/profile_block.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <sstream>

namespace omnib {
namespace {

ResultRecord profiled(const std::string& algo, double cpu_us) {
  ResultRecord r;
  r.algo = algo;
  r.config.size_bytes = 1 << 20;
  r.time_us.median = 1000;
  r.profile = ProfileSummary{};
  r.profile->calls = 3;
  r.cpu = CpuUsage{cpu_us * 0.75, cpu_us * 0.25, 0, std::nullopt, {}, std::nullopt};
  return r;
}

std::string printed(const std::vector<ProfileRow>& rows) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  print_profile_block(out, rows);
  std::fclose(out);
  std::string s(text, size);
  std::free(text);
  return s;
}

// The last `n` whitespace-separated words of the row that mentions `algo`
// (not the header, which names "vs ring").
std::vector<std::string> last_words(const std::string& block, const std::string& algo, size_t n) {
  std::istringstream lines(block);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find(" " + algo + " ") == std::string::npos || line.find("size(B)") != std::string::npos) continue;
    std::istringstream words(line);
    std::vector<std::string> all{std::istream_iterator<std::string>(words), {}};
    return {all.end() - static_cast<ptrdiff_t>(n), all.end()};
  }
  return {};
}

TEST(ProfileBlock, CpuPerCallIsSetBesideRings) {
  ResultRecord omni = profiled("omni", 3000), ring = profiled("ring", 12000);
  omni.memory_floor = MemoryFloor{};
  omni.memory_floor->floor_us = 250;
  omni.of_bound = 0.25;
  const std::string block = printed(profile_rows({omni, ring}));
  for (const char* column : {"floor(ms)", "of bound", "cpu/call(ms)", "vs ring"})
    EXPECT_NE(block.find(column), std::string::npos) << column << "\n" << block;
  EXPECT_EQ(last_words(block, "omni", 5), (std::vector<std::string>{"0.250", "25.0%", "3.000", "0.25x", "-"})) << block;
  EXPECT_EQ(last_words(block, "ring", 5), (std::vector<std::string>{"-", "-", "12.000", "1.00x", "-"})) << block;
}

TEST(ProfileBlock, WithoutRingThereIsNothingToSetBeside) {
  ResultRecord ring = profiled("ring", 12000);
  ring.skipped = true;  // a skipped ring ran nothing and has no profile
  ring.profile.reset();
  const std::string block = printed(profile_rows({profiled("omni", 3000), ring}));
  EXPECT_EQ(last_words(block, "omni", 3), (std::vector<std::string>{"3.000", "-", "-"})) << block;
  EXPECT_EQ(printed(profile_rows({profiled("omni", 3000)})), block);
}

// The last column: the share of its call the slowest rank waited for a CPU,
// '-' where the kernel reports no run delays.
TEST(ProfileBlock, CpuWaitOfTheSlowestRank) {
  ResultRecord omni = profiled("omni", 3000);
  omni.cpu->wait_share_per_rank = {0.02, 0.34};
  const std::string block = printed(profile_rows({omni}));
  EXPECT_NE(block.find("cpu wait"), std::string::npos) << block;
  EXPECT_EQ(last_words(block, "omni", 1), (std::vector<std::string>{"34.0%"})) << block;
}

}  // namespace
}  // namespace omnib
