// --gpu-sync without a GPU: where --help lists it, and that every result
// records it (spin, the default, on host tensors; the value asked for on
// device tensors). Its usage errors are in cli_errors_test.cc; a blocking
// run on a GPU in device_e2e_test.cc.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include "tests/support/cli_runner.h"
#include "tools/allreduce/allreduce_options.h"
#include "tools/allreduce/run_plan.h"

namespace omnib {
namespace {

using testing::run_cli;

// The lines of the help group headed `title` (up to the next empty line).
std::string help_group(const std::string& help, const std::string& title) {
  const size_t start = help.find("\n" + title + ":\n");
  if (start == std::string::npos) return "";
  const size_t end = help.find("\n\n", start + 1);
  return help.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(GpuSync, HelpListsItBesideTheDevice) {
  auto r = run_cli({"allreduce", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string inputs = help_group(r.out, "Inputs");
  ASSERT_NE(inputs.find("--device"), std::string::npos) << r.out;
  const size_t line = inputs.find("--gpu-sync TEXT=spin");
  ASSERT_NE(line, std::string::npos) << inputs;
  const std::string text = inputs.substr(line, inputs.find('\n', line) - line);
  for (const char* word : {"--device cuda", "spin", "blocking", "docs/gpu.md"})
    EXPECT_NE(text.find(word), std::string::npos) << word << " in: " << text;
}

Result<RunPlan> plan_of(const std::vector<std::string>& args) {
  CLI::App app;
  AllreduceOptions o;
  bind_allreduce_options(app, o);
  app.parse(std::vector<std::string>(args.rbegin(), args.rend()));
  return plan_allreduce(o, 1, std::nullopt);
}

TEST(GpuSync, ThePlanRecordsWhatWasAskedInEveryConfiguration) {
  auto blocking = plan_of({"--device", "cuda", "--gpu-sync", "blocking", "-b", "4K", "-e", "8K"});
  ASSERT_TRUE(blocking.is_ok()) << blocking.status().message();
  EXPECT_EQ(blocking.value().describe()["gpu_sync"], "blocking");
  for (size_t k = 0; k < blocking.value().sizes.size(); ++k)
    EXPECT_EQ(blocking.value().config(k).key()["gpu_sync"], "blocking");
  auto plain = plan_of({"--device", "cuda", "-b", "4K", "-e", "4K"});
  ASSERT_TRUE(plain.is_ok()) << plain.status().message();
  EXPECT_EQ(plain.value().config(0).key()["gpu_sync"], "spin");
}

TEST(GpuSync, ResultsOnHostTensorsRecordSpin) {
  const std::string json = testing::temp_path("cpu.json");
  auto r = run_cli({"allreduce", "--algo", "omni", "--nodes", "2", "-b", "4K", "-e", "4K", "-n", "1", "-w", "0",
                    "-J", json});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = testing::read_json(json);
  EXPECT_EQ(doc["configuration"]["gpu_sync"], "spin");
  ASSERT_FALSE(doc["results"].empty());
  for (const auto& rec : doc["results"]) EXPECT_EQ(rec["config"]["gpu_sync"], "spin") << rec.dump();
}

}  // namespace
}  // namespace omnib
