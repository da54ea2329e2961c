// Bad input gets one clear line and exit code 2 (docs/exit-codes.md).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "tests/support/cli_runner.h"
#include "tools/allreduce/device_tensors.h"
#include "tools/record/result_record.h"

namespace omnib {
namespace {

using testing::run_cli;

struct BadArgs {
  std::string name;
  std::vector<std::string> args;
  std::string expect_in_message;
};

class CliUsageErrors : public ::testing::TestWithParam<BadArgs> {};

TEST_P(CliUsageErrors, ExitTwoWithAClearMessage) {
  std::vector<std::string> args{"allreduce"};
  args.insert(args.end(), GetParam().args.begin(), GetParam().args.end());
  auto r = run_cli(args, {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(GetParam().expect_in_message), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 10);
}

INSTANTIATE_TEST_SUITE_P(
    Arguments, CliUsageErrors,
    ::testing::Values(BadArgs{"density_above_one", {"--density", "1.5"}, "--density must be in [0,1]"},
                      BadArgs{"density_negative", {"--density", "-0.1"}, "--density must be in [0,1]"},
                      BadArgs{"block_size_zero", {"--block-size", "0"}, "--block-size must be at least 1"},
                      BadArgs{"size_overflow", {"-b", "99999999999999G", "-e", "99999999999999G"}, "overflows"},
                      BadArgs{"size_garbage", {"-b", "12Q"}, "K, M or G suffix"},
                      BadArgs{"too_big_for_memory", {"-b", "64G", "-e", "64G"}, "lower -e/--maxbytes"},
                      BadArgs{"unknown_algorithm", {"--algo", "omni,nope"}, "unknown algorithm 'nope'"},
                      BadArgs{"unknown_datatype", {"-d", "float64"}, "not supported"},
                      BadArgs{"min_above_max", {"-b", "4M", "-e", "1M"}, "larger than"},
                      BadArgs{"bad_overlap", {"--overlap", "sometimes"}, "--overlap"},
                      BadArgs{"idle_restart_without_emulation", {"--tcp-idle-restart", "on"}, "add --net emulate"},
                      BadArgs{"idle_restart_garbage", {"--net", "emulate", "--tcp-idle-restart", "yes"},
                              "--tcp-idle-restart"},
                      BadArgs{"disjoint_too_dense",
                              {"--overlap", "none", "--density", "0.5", "--nodes", "4", "-b", "4K", "-e", "4K"},
                              "needs more blocks"},
                      BadArgs{"zero_nodes", {"--nodes", "0"}, "--nodes"},
                      BadArgs{"unknown_flag", {"--frobnicate"}, "frobnicate"},
                      BadArgs{"bad_check", {"-c", "2"}, "-c/--check"},
                      BadArgs{"size_zero", {"-b", "0", "-e", "4K"}, "holds no whole 4-byte element"},
                      BadArgs{"listed_size_below_an_element", {"--sizes", "4K,2"}, "holds no whole 4-byte element"},
                      BadArgs{"too_many_sizes", {"-b", "4", "-e", "1G", "-f", "1.00001"}, "at most 1000"},
                      BadArgs{"series_that_stalls", {"-b", "4", "-e", "64", "-f", "1.1"}, "does not advance"},
                      BadArgs{"timeout_that_overflows", {"-T", "2147484"}, "-T/--timeout must be between 1 and"},
                      BadArgs{"repeat_zero", {"--repeat", "0"}, "--repeat"},
                      BadArgs{"algorithm_twice", {"--algo", "omni,ring,omni"}, "names 'omni' twice"},
                      BadArgs{"trace_iters_alone", {"--trace-iters", "2"}, "--trace or --profile"},
                      BadArgs{"trace_iters_negative", {"--profile", "--trace-iters", "-1"}, "--trace-iters must be"},
                      BadArgs{"trace_buffer_tiny", {"--profile", "--trace-buffer", "1"}, "--trace-buffer must be"},
                      BadArgs{"trace_is_the_results", {"--trace", "same.json", "-J", "same.json"}, "same file"},
                      // NaN fails every comparison: a check that tested `< 0` took it and checked nothing.
                      BadArgs{"min_busbw_nan", {"--min-busbw", "nan"}, "--min-busbw 'nan' is not a finite number"},
                      BadArgs{"min_speedup_nan", {"--algo", "omni,ps", "--min-speedup", "nan"}, "is not a finite"},
                      BadArgs{"min_busbw_infinite", {"--min-busbw", "inf"}, "is not a finite number"},
                      BadArgs{"step_factor_nan", {"-f", "nan"}, "--stepfactor 'nan' is not a finite number"},
                      BadArgs{"duration_empty", {"--duration", ""}, "--duration '' is empty"},
                      BadArgs{"json_empty", {"-J", ""}, "is empty"},
                      BadArgs{"seed_past_64_bits",
                              {"--seed", "18446744073709551616"},
                              "--seed '18446744073709551616' is out of range"},
                      BadArgs{"seed_negative", {"--seed", "-1"}, "is negative"},
                      BadArgs{"gpu_sync_unknown",
                              {"--device", "cuda", "--gpu-sync", "yield"},
                              "--gpu-sync 'yield' is not known: use spin or blocking"},
                      BadArgs{"gpu_sync_on_cpu", {"--gpu-sync", "blocking"}, "--device cpu uses none"},
                      BadArgs{"gpu_sync_spin_on_cpu", {"--device", "cpu", "--gpu-sync", "spin"}, "add --device cuda"}),
    [](const auto& info) { return info.param.name; });

TEST(CliFiles, ExistingJsonIsNotOverwritten) {
  std::string path = testing::temp_path("exists.json");
  std::ofstream(path) << "{\"keep\": true}\n";
  auto r = run_cli({"allreduce", "--nodes", "1", "-b", "4K", "-e", "4K", "-n", "1", "-w", "0", "-J", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("already exists"), std::string::npos) << r.err;
  EXPECT_EQ(testing::read_json(path)["keep"], true);
  auto forced =
      run_cli({"allreduce", "--nodes", "1", "-b", "4K", "-e", "4K", "-n", "1", "-w", "0", "-J", path, "--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(testing::read_json(path)["schema_version"], kSchemaVersion);
}

// An empty secret is a mistake, not a choice to run unauthenticated.
TEST(CliLaunch, EmptyJobTokenUnderAnExternalLauncherIsRefused) {
  auto r = run_cli({"allreduce", "-b", "4K", "-e", "4K", "-n", "1", "-T", "5"},
                   {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=1", "OMNIB_JOB_TOKEN="}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("OMNIB_JOB_TOKEN is set but empty"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 10);
}

TEST(CliLaunch, ExternalLauncherWithoutRendezvousFailsLoudly) {
  auto r = run_cli({"allreduce", "-b", "4K", "-e", "4K"},
                   {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=4", "MASTER_ADDR=", "MASTER_PORT="}, 30);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("MASTER_ADDR"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("independent"), std::string::npos) << r.err;
}

TEST(CliLaunch, NodeCountThatDisagreesWithTheLauncherIsAnError) {
  auto r = run_cli({"allreduce", "--nodes", "3", "-b", "4K", "-e", "4K", "-T", "5"},
                   {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=0"}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("make them agree"), std::string::npos) << r.err;
}

// list: name, family, whether --device cpu / cuda runs it by default, when
// asked, or not on this host (then why, under the table).
TEST(CliLaunch, ListGivesFamilyDefaultsAndWhatRunsHere) {
  auto r = run_cli({"list"});
  ASSERT_EQ(r.exit_code, 0);
  std::map<std::string, std::vector<std::string>> rows;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string name, family, cpu, cuda;
    if (words >> name >> family >> cpu >> cuda && name[0] != '#') rows[name] = {family, cpu, cuda};
  }
  const bool gpu = device_tensors_unavailable_reason().empty();
  EXPECT_EQ(rows["omni"], (std::vector<std::string>{"sparse", "default", gpu ? "default" : "no"})) << r.out;
  EXPECT_EQ(rows["ps"], (std::vector<std::string>{"dense", "default", gpu ? "default" : "no"})) << r.out;
  EXPECT_EQ(rows["tree"], (std::vector<std::string>{"dense", "yes", "no"})) << r.out;
  EXPECT_EQ(rows["oktopk"], (std::vector<std::string>{"sparse", "yes", "no"})) << r.out;
  if (!gpu) {
    const std::string said = "every algorithm with --device cuda: " + device_tensors_unavailable_reason();
    EXPECT_NE(r.out.find(said), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace omnib

namespace omnib {
namespace {

TEST(CliDevice, CudaWithoutAGpuExitsSix) {
  if (device_tensors_unavailable_reason().empty()) GTEST_SKIP() << "this machine has a GPU (see device_e2e_test)";
  auto r = testing::run_cli({"allreduce", "--device", "cuda", "-b", "4K", "-e", "4K"}, {}, 30);
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_NE(r.err.find("--device cpu"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace omnib
