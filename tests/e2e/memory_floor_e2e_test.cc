// The memory floor end to end (docs/profiling.md, "The memory floor"). The
// floor claims that no call can be faster; the run that comes nearest to
// it is omni on all-zero inputs, whose calls scan every input, zero every
// output and send next to nothing. The floor must be no slower than that
// run's fastest call, nor than what omni's CPU time per call allows (the
// same passes and more, whatever else loads the host), and an inflated
// floor (omni-bench-sabotage with OMNIB_SABOTAGE_FLOOR) must fail the same
// check. A second run takes the floor from the cache; a floor the calls
// beat is not kept; --profile prints the floor, the bound and the CPU time
// per call against ring's.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli_runner.h"

namespace omnib {
namespace {

using nlohmann::json;
using testing::read_json;
using testing::temp_path;

struct ProfiledRun {
  testing::CliResult cli;
  json doc;
};

// `omni-bench allreduce ARGS --profile -J FILE` (of `binary`) with the
// floors kept in `cache`.
ProfiledRun run_profiled(const std::string& binary, std::vector<std::string> args, const std::string& cache,
                         const std::vector<std::string>& env = {}) {
  const std::string out = temp_path("floor.json");
  args.insert(args.begin(), "allreduce");
  for (const char* a : {"--profile", "-T", "60", "-J"}) args.push_back(a);
  args.push_back(out);
  std::vector<std::string> full_env{"OMNIB_FLOOR_CACHE=" + cache};
  full_env.insert(full_env.end(), env.begin(), env.end());
  ProfiledRun r;
  r.cli = testing::run_binary(binary, args, full_env, 300);
  if (r.cli.exit_code == 0) r.doc = read_json(out);
  return r;
}

// 4 ranks on this host, 32 MiB each: tensors beyond the caches, passes of
// milliseconds. omni's empty calls take 2 to 7 times the floor in wall time
// (more the busier the host), and about twice its passes' CPU time.
const std::vector<std::string> kZeroInputs{"--nodes", "4",      "-b",   "32M", "-e", "32M", "--density",
                                           "0",       "--algo", "omni", "-n",  "7",  "-w",  "1"};

const json* record_of(const json& doc, const std::string& algo) {
  for (const auto& r : doc["results"])
    if (r["algo"] == algo) return &r;
  return nullptr;
}

// The floor is at most the fastest call of a run that makes its passes and
// little more, and at most the least time omni's CPU per call allows: its
// busiest rank's CPU time, or all ranks' over the host's CPUs (as
// tools/measure/memory_floor.h bounds the passes). The wall-time check is
// what the floor promises; the CPU check holds however busy the host is,
// and catches an inflation that a slow call on a busy host would hide.
::testing::AssertionResult floor_holds(const ProfiledRun& run) {
  if (run.cli.exit_code != 0)
    return ::testing::AssertionFailure() << "exit " << run.cli.exit_code << ": " << run.cli.err;
  const json* omni = record_of(run.doc, "omni");
  if (!omni || !omni->contains("memory_floor")) return ::testing::AssertionFailure() << "no floor: " << run.doc;
  const json& floor = (*omni)["memory_floor"];
  const double floor_us = floor["floor_us"].get<double>();
  const double fastest_us = (*omni)["time_us"]["min"].get<double>();
  const json& cpu = (*omni)["cpu"];
  const double cpu_bound_us = std::max(
      cpu["rank_max_us_per_call"].get<double>(),
      (cpu["user_us_per_call"].get<double>() + cpu["sys_us_per_call"].get<double>()) / floor["cpus"].get<int>());
  std::ostringstream figures;
  figures << "floor " << floor_us << " us, fastest call " << fastest_us << " us (calls " << (*omni)["samples_us"]
          << "), omni's CPU allows " << cpu_bound_us << " us";
  if (floor_us <= fastest_us && floor_us <= cpu_bound_us) return ::testing::AssertionSuccess() << figures.str();
  return ::testing::AssertionFailure() << "the floor is above what omni on zero inputs did: " << figures.str();
}

TEST(MemoryFloorEndToEnd, TheFloorIsBelowTheFastestCallOfAMemoryBoundRun) {
  const auto run = run_profiled(testing::omni_bench_binary(), kZeroInputs, temp_path("cache"));
  EXPECT_TRUE(floor_holds(run));
  ASSERT_EQ(run.cli.exit_code, 0) << run.cli.err;
  const json& omni = *record_of(run.doc, "omni");
  EXPECT_EQ(omni["memory_floor"]["source"], "measured");
  EXPECT_TRUE(omni["memory_floor"]["writes_output"].get<bool>());
  // Nothing but the floor bounds these calls, so of_bound is floor / median.
  EXPECT_NEAR(omni["of_bound"].get<double>(),
              omni["memory_floor"]["floor_us"].get<double>() / omni["time_us"]["median"].get<double>(), 1e-9);
}

// In place only the read is unavoidable: omni leaves a zero output alone.
TEST(MemoryFloorEndToEnd, InPlaceTheFloorOnlyReads) {
  std::vector<std::string> args = kZeroInputs;
  args.push_back("--inplace");
  const auto run = run_profiled(testing::omni_bench_binary(), args, temp_path("cache"));
  EXPECT_TRUE(floor_holds(run));
  ASSERT_EQ(run.cli.exit_code, 0) << run.cli.err;
  EXPECT_FALSE((*record_of(run.doc, "omni"))["memory_floor"]["writes_output"].get<bool>());
}

// The check above is only a check once it has caught a floor that is not
// one: every pass counted four times over.
TEST(MemoryFloorEndToEnd, AnInflatedFloorIsCaught) {
  const auto run =
      run_profiled(testing::sabotage_binary(), kZeroInputs, temp_path("cache"), {"OMNIB_SABOTAGE_FLOOR=4"});
  ASSERT_EQ(run.cli.exit_code, 0) << run.cli.err;
  EXPECT_FALSE(floor_holds(run));
}

// A floor that a call beat is none (here: passes counted fifty times
// over): the run says so and removes it from the cache, so that the next
// run measures it again.
TEST(MemoryFloorEndToEnd, AFloorTheCallsBeatIsNotKept) {
  const auto run =
      run_profiled(testing::sabotage_binary(), kZeroInputs, temp_path("cache"), {"OMNIB_SABOTAGE_FLOOR=50"});
  ASSERT_EQ(run.cli.exit_code, 0) << run.cli.err;
  EXPECT_NE(run.cli.err.find("is above the fastest call"), std::string::npos) << run.cli.err;
  const std::string file = (*record_of(run.doc, "omni"))["memory_floor"]["cache_file"].get<std::string>();
  ASSERT_FALSE(file.empty());
  EXPECT_FALSE(std::filesystem::exists(file)) << file << " keeps a floor the calls beat";
  EXPECT_GT((*record_of(run.doc, "omni"))["of_bound"].get<double>(), 1.0);
}

// Measured once per host, rank count and size: the second run reads the
// file the first wrote, which holds its key and the command that made it;
// another size is measured anew.
TEST(MemoryFloorEndToEnd, ASecondRunTakesTheFloorFromTheCache) {
  const std::string cache = temp_path("cache");
  const std::vector<std::string> args{"--nodes", "2", "-b", "1M", "-e", "1M", "--algo", "ring", "-n", "2", "-w", "1"};
  const auto first = run_profiled(testing::omni_bench_binary(), args, cache);
  ASSERT_EQ(first.cli.exit_code, 0) << first.cli.err;
  const json floor = (*record_of(first.doc, "ring"))["memory_floor"];
  EXPECT_EQ(floor["source"], "measured");
  EXPECT_EQ(floor["ranks"], 2);
  EXPECT_EQ(floor["size_bytes"], 1 << 20);
  EXPECT_EQ(floor["dtype_bytes"], 4);
  EXPECT_EQ(floor["repetitions"], 9);
  const std::string file = floor["cache_file"].get<std::string>();
  ASSERT_EQ(file.rfind(cache + "/", 0), 0u) << file;
  const json kept = read_json(file);
  EXPECT_NE(kept["command_line"].get<std::string>().find("--profile"), std::string::npos) << kept;
  EXPECT_EQ(kept["passes"].size(), 2u);  // both ranks' timed passes
  EXPECT_EQ(kept["key"]["host"], floor["host"]);

  const auto second = run_profiled(testing::omni_bench_binary(), args, cache);
  ASSERT_EQ(second.cli.exit_code, 0) << second.cli.err;
  const json again = (*record_of(second.doc, "ring"))["memory_floor"];
  EXPECT_EQ(again["source"], "cache");
  EXPECT_EQ(again["floor_us"], floor["floor_us"]);
  EXPECT_EQ(again["cache_file"], file);

  std::vector<std::string> bigger = args;
  bigger[3] = bigger[5] = "2M";
  const auto third = run_profiled(testing::omni_bench_binary(), bigger, cache);
  ASSERT_EQ(third.cli.exit_code, 0) << third.cli.err;
  EXPECT_EQ((*record_of(third.doc, "ring"))["memory_floor"]["source"], "measured");
}

// A cache that cannot be written costs the next run a measurement, never
// this run its results: it says so on stderr.
TEST(MemoryFloorEndToEnd, ACacheThatCannotBeWrittenIsOnlyAWarning) {
  const std::string blocker = temp_path("not-a-folder");
  std::ofstream(blocker) << "a file where the cache folder would go";
  const auto run = run_profiled(testing::omni_bench_binary(),
                                {"--nodes", "2", "-b", "64K", "-e", "64K", "--algo", "ring", "-n", "1", "-w", "0"},
                                blocker + "/floors");
  ASSERT_EQ(run.cli.exit_code, 0) << run.cli.err;
  const json floor = (*record_of(run.doc, "ring"))["memory_floor"];
  EXPECT_EQ(floor["source"], "measured");
  EXPECT_EQ(floor["cache_file"], "");
  EXPECT_NE(run.cli.err.find("is not kept"), std::string::npos) << run.cli.err;
}

// The block beside the link limit: the floor, the bound, and CPU per call
// against ring's; without --profile nothing is measured or kept.
TEST(MemoryFloorEndToEnd, TheProfileBlockShowsTheFloorAndCpuAgainstRing) {
  const std::string cache = temp_path("cache");
  const auto run = run_profiled(
      testing::omni_bench_binary(),
      {"--nodes", "3", "-b", "1M", "-e", "1M", "--density", "0.1", "--algo", "ring,omni", "-n", "2", "-w", "1"}, cache);
  ASSERT_EQ(run.cli.exit_code, 0) << run.cli.err;
  for (const char* column : {"floor(ms)", "of bound", "cpu/call(ms)", "vs ring", " 1.00x"})
    EXPECT_NE(run.cli.out.find(column), std::string::npos) << column << "\n" << run.cli.out;
  for (const auto& rec : run.doc["results"]) {
    ASSERT_TRUE(rec.contains("memory_floor")) << rec["algo"];
    EXPECT_GT(rec["memory_floor"]["floor_us"].get<double>(), 0);
    EXPECT_GT(rec["of_bound"].get<double>(), 0);
  }

  const std::string plain_cache = temp_path("plain-cache");
  const std::string out = temp_path("plain.json");
  const auto plain = testing::run_cli(
      {"allreduce", "--nodes", "2", "-b", "64K", "-e", "64K", "--algo", "ring", "-n", "1", "-w", "0", "-J", out},
      {"OMNIB_FLOOR_CACHE=" + plain_cache});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE(read_json(out)["results"][0].contains("memory_floor"));
  EXPECT_FALSE(std::filesystem::exists(plain_cache));
}

}  // namespace
}  // namespace omnib
