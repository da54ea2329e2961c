// The memory floor's pieces (docs/profiling.md, "The memory floor"): the
// passes it times (tools/measure/memory_floor.h), how a host's floor is made
// of its workers' times, the cache that keeps it (floor_cache.h) and the
// bound a record gets from it (memory_bound.h).
#include "tools/measure/memory_floor.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <fstream>

#include "tests/support/cli_runner.h"
#include "tools/measure/floor_cache.h"
#include "tools/measure/memory_bound.h"

namespace omnib {
namespace {

using nlohmann::json;

TEST(MemoryFloor, EachRankGetsItsShareOfTheCores) {
  EXPECT_EQ(floor_threads_per_rank(4, 2), 1);  // ranks share cores: one thread each
  EXPECT_EQ(floor_threads_per_rank(1, 2), 2);
  EXPECT_EQ(floor_threads_per_rank(4, 64), 16);
  EXPECT_EQ(floor_threads_per_rank(3, 8), 2);
}

// Per repetition, the busiest thread's CPU time or all threads' CPU time
// over the CPUs, whichever is more; the least of those over repetitions.
TEST(MemoryFloor, AHostsFloorIsTheLeastTimeItsPassesCouldTake) {
  auto cpu = [](double busiest, double all) { return PassTime{1e9, busiest, all}; };  // wall time plays no part
  EXPECT_DOUBLE_EQ(host_floor_us({{cpu(10, 10), cpu(30, 30), cpu(20, 20)}}, 2), 10);
  // Two workers on one CPU take turns: 12 + 12; on four CPUs the busier one sets it.
  const std::vector<std::vector<PassTime>> two{{cpu(12, 12), cpu(30, 30)}, {cpu(12, 12), cpu(1, 1)}};
  EXPECT_DOUBLE_EQ(host_floor_us(two, 1), 24);
  EXPECT_DOUBLE_EQ(host_floor_us(two, 4), 12);
  // A worker of two threads: its busiest one, unless the CPUs are too few for all.
  EXPECT_DOUBLE_EQ(host_floor_us({{cpu(5, 10)}}, 2), 5);
  EXPECT_DOUBLE_EQ(host_floor_us({{cpu(5, 10)}}, 1), 10);
  EXPECT_DOUBLE_EQ(host_floor_us({}, 2), 0);
}

// The pass reads the input (a non-zero one is refused: its scan would stop
// early) and writes every byte of the output, with any thread count.
TEST(MemoryFloor, APassWritesTheWholeOutputAndNeedsAZeroInput) {
  for (size_t elem : {size_t{2}, size_t{4}}) {
    for (int threads : {1, 3}) {
      const size_t bytes = (size_t{1} << 20) + 6 * elem;  // a short last block
      std::vector<uint8_t> in(bytes, 0), out(bytes, 0xAB);
      auto pass = time_floor_pass(in.data(), out.data(), bytes, elem, threads);
      ASSERT_TRUE(pass.is_ok()) << pass.status().message();
      EXPECT_GT(pass.value().wall_us, 0);
      EXPECT_GT(pass.value().busiest_us, 0);
      EXPECT_GE(pass.value().cpu_us, pass.value().busiest_us);
      EXPECT_EQ(std::count(out.begin(), out.end(), 0), static_cast<ptrdiff_t>(bytes)) << elem << " " << threads;
      // In place the pass only reads.
      auto read_only = time_floor_pass(in.data(), nullptr, bytes, elem, threads);
      ASSERT_TRUE(read_only.is_ok()) << read_only.status().message();
      in[bytes - elem] = 1;
      auto refused = time_floor_pass(in.data(), out.data(), bytes, elem, threads);
      EXPECT_FALSE(refused.is_ok());
    }
  }
}

FloorKey a_key() { return FloorKey{"host-a", "AMD EPYC", 4, 1, 2, size_t{64} << 20, 4, true}; }

TEST(FloorCache, AFloorIsReadBackOnlyForItsOwnKey) {
  const std::string dir = testing::temp_path("cache") + "/deeper";  // made when written
  const FloorKey key = a_key();
  const std::string file = floor_cache_file(dir, key);
  EXPECT_FALSE(read_cached_floor(file, key));
  const PassTime pass{3, 2, 2};
  ASSERT_TRUE(
      write_cached_floor(file, key, {1234.5, {{pass, pass}, {pass, pass}}, "omni-bench allreduce --profile"}).is_ok());
  EXPECT_EQ(read_cached_floor(file, key), 1234.5);
  // The file says what made it.
  const json j = testing::read_json(file);
  EXPECT_EQ(j["command_line"], "omni-bench allreduce --profile");
  EXPECT_EQ(j["key"]["ranks"], 4);
  EXPECT_EQ(j["key"]["cpu_model"], "AMD EPYC");
  EXPECT_EQ(j["passes"].size(), 2u);
  EXPECT_EQ(j["passes"][1][0]["busiest_us"], 2);
  // Whatever would change the floor makes another key, and another file.
  for (auto change : {+[](FloorKey& k) { k.ranks = 2; }, +[](FloorKey& k) { k.size_bytes *= 2; },
                      +[](FloorKey& k) { k.dtype_bytes = 2; }, +[](FloorKey& k) { k.host = "host-b"; },
                      +[](FloorKey& k) { k.cpu_model = "Intel Xeon"; }, +[](FloorKey& k) { k.threads_per_rank = 2; },
                      +[](FloorKey& k) { k.cpus = 4; }, +[](FloorKey& k) { k.writes_output = false; }}) {
    FloorKey other = key;
    change(other);
    EXPECT_NE(floor_cache_file(dir, other), file);
    EXPECT_FALSE(read_cached_floor(file, other));
  }
}

TEST(FloorCache, ADamagedFileIsNoFloor) {
  const std::string dir = testing::temp_path("damaged");
  const FloorKey key = a_key();
  const std::string file = floor_cache_file(dir, key);
  ASSERT_TRUE(write_cached_floor(file, key, {1234.5, {{PassTime{}}}, "x"}).is_ok());
  for (const char* text : {"{\"key\":", "[]", "{}"}) {
    std::ofstream(file) << text;
    EXPECT_FALSE(read_cached_floor(file, key)) << text;
  }
  json j{{"key", key.to_json()}, {"floor_us", -1}};
  std::ofstream(file) << j.dump();
  EXPECT_FALSE(read_cached_floor(file, key));
}

TEST(FloorCache, TheFolderComesFromTheEnvironment) {
  const char* saved[] = {getenv(kFloorCacheVar), getenv("XDG_CACHE_HOME"), getenv("HOME")};
  const std::string keep[] = {saved[0] ? saved[0] : "", saved[1] ? saved[1] : "", saved[2] ? saved[2] : ""};
  setenv(kFloorCacheVar, "/somewhere/floors", 1);
  EXPECT_EQ(floor_cache_dir(), "/somewhere/floors");
  unsetenv(kFloorCacheVar);
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(floor_cache_dir(), "/xdg/omni-bench/memory-floor");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/me", 1);
  EXPECT_EQ(floor_cache_dir(), "/home/me/.cache/omni-bench/memory-floor");
  unsetenv("HOME");
  EXPECT_EQ(floor_cache_dir(), "");
  const char* names[] = {kFloorCacheVar, "XDG_CACHE_HOME", "HOME"};
  for (int i = 0; i < 3; ++i)
    if (saved[i]) setenv(names[i], keep[i].c_str(), 1);
}

TEST(FloorCache, AFolderThatCannotBeMadeSaysWhatToSet) {
  const std::string blocker = testing::temp_path("a-file");
  std::ofstream(blocker) << "not a folder";
  const Status s =
      write_cached_floor(floor_cache_file(blocker + "/floors", a_key()), a_key(), {1, {{PassTime{}}}, "x"});
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find(kFloorCacheVar), std::string::npos) << s.message();
}

// bound = max(link limit, floor); of_bound = bound / median, as of_limit.
TEST(MemoryBound, TheBoundIsTheLargerOfLinkLimitAndFloor) {
  MemoryFloor floor;
  floor.floor_us = 20;
  ResultRecord r;
  r.time_us.median = 80;
  set_memory_bound(floor, r);
  ASSERT_TRUE(r.memory_floor && r.of_bound);
  EXPECT_DOUBLE_EQ(*r.of_bound, 0.25);  // no link limit: the floor
  r.link_limit = LinkLimit{40, 0.5};
  set_memory_bound(floor, r);
  EXPECT_DOUBLE_EQ(*r.of_bound, 0.5);  // the link's limit is the larger
  r.link_limit = LinkLimit{10, 0.125};
  set_memory_bound(floor, r);
  EXPECT_DOUBLE_EQ(*r.of_bound, 0.25);
  r.skipped = true;
  set_memory_bound(floor, r);
  EXPECT_FALSE(r.memory_floor);
  EXPECT_FALSE(r.of_bound);
}

}  // namespace
}  // namespace omnib
