// `allreduce --duration`: timed calls for a wall-clock time, the same calls
// on every rank and for every algorithm, bounded samples, a JSON file
// checkpointed so that a killed run leaves complete records, and the
// resources block with its footer; and proof that the soak check catches a
// leak of memory or descriptors (the sabotage build).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "tests/support/cli_runner.h"
#include "tests/support/soak_check.h"
#include "tools/compare/result_file.h"
#include "tools/measure/duration_tally.h"
#include "tools/process/child_process.h"

namespace omnib {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

TEST(DurationRun, RunsForItsTimeWithTheSameCallsForEveryAlgorithm) {
  const std::string path = testing::temp_path("soak.json");
  // 4 s over 2 sizes x 2 runs: a second per run.
  auto r = testing::run_cli({"allreduce", "--nodes", "3", "--aggregators", "1", "--algo", "omni,ring", "--sizes",
                             "4K,16K", "--repeat", "2", "--duration", "4s", "-w", "1", "-T", "30", "-J", path},
                            {}, 120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = testing::read_json(path);
  EXPECT_EQ(doc["complete"], true);
  EXPECT_EQ(doc["configuration"]["duration_s"], 4.0);
  EXPECT_TRUE(doc["configuration"]["iters"].is_null());
  ASSERT_EQ(doc["results"].size(), 4u);
  for (size_t i = 0; i < 4; i += 2) {
    const json& omni = doc["results"][i];
    const json& ring = doc["results"][i + 1];
    ASSERT_EQ(omni["algo"], "omni");
    const json& d = omni["duration"];
    EXPECT_EQ(d["complete"], true);
    EXPECT_DOUBLE_EQ(d["requested_s"].get<double>(), 2.0);
    EXPECT_GE(d["elapsed_s"].get<double>(), 1.9);
    EXPECT_LT(d["elapsed_s"].get<double>(), 4.0);
    EXPECT_GT(d["timed_calls"].get<uint64_t>(), 2u);
    EXPECT_EQ(d["timed_calls"], ring["duration"]["timed_calls"]);
    EXPECT_EQ(omni["samples_us"].size(), std::min<uint64_t>(d["timed_calls"].get<uint64_t>(), kKeptSamples));
    EXPECT_EQ(omni["runs"].size(), 2u);
    EXPECT_EQ(omni["correct"], true);
    EXPECT_EQ(ring["correct"], true);
    // Every rank checked every call: warm-ups and timed calls of both runs.
    EXPECT_EQ(omni["calls_checked"].get<uint64_t>(), d["timed_calls"].get<uint64_t>() + 2);
  }
  ASSERT_TRUE(doc.contains("resources"));
  for (const char* role : {"launcher", "worker", "aggregator"})
    EXPECT_TRUE(doc["resources"]["roles"].contains(role)) << role;
  EXPECT_EQ(doc["resources"]["roles"]["worker"]["processes"], 3);
  EXPECT_NE(r.out.find("# resources: "), std::string::npos) << r.out;
  auto loaded = load_result_file(path);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  ASSERT_TRUE(loaded.value().records[0].duration.has_value());
}

TEST(DurationRun, ARunOfFixedCallsHasAResourcesBlockToo) {
  const std::string path = testing::temp_path("fixed.json");
  auto r = testing::run_cli({"allreduce", "--nodes", "2", "--algo", "ring", "--sizes", "4K,1M", "-n", "50", "-w", "2",
                             "-T", "30", "-J", path},
                            {}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = testing::read_json(path);
  // Counted from the first timed call of the last size: each size starts
  // afresh, so the pages 1M touches beyond 4K are not growth.
  EXPECT_EQ(doc["resources"]["calls"], 50u);
  EXPECT_EQ(doc["resources"]["verdict"], "flat") << doc["resources"].dump(1);
  ASSERT_EQ(doc["resources"]["sizes"].size(), 2u);
  EXPECT_EQ(doc["resources"]["sizes"][1]["calls"], 50u);
  EXPECT_FALSE(doc["results"][0].contains("duration"));
  // Sampled before any rank could leave and close its store connection.
  EXPECT_EQ(doc["resources"]["roles"]["launcher"]["growth"]["fds"]["change"], 0) << doc["resources"].dump(1);
  EXPECT_EQ(doc["results"][0]["samples_us"].size(), 50u);
  EXPECT_NE(r.out.find("# resources: "), std::string::npos) << r.out;
}

TEST(DurationRun, OptionsThatCannotGoTogetherAreUsageErrors) {
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  for (const Case& c : {Case{{"--duration", "10s", "-n", "5"}, "drop one of them"},
                        Case{{"--checkpoint-interval", "5s"}, "add --duration"},
                        Case{{"--duration", "30"}, "has no unit"},
                        Case{{"--duration", "0.5s"}, "out of range"},
                        Case{{"--duration", "10s", "--checkpoint-interval", "soon"}, "--checkpoint-interval"},
                        Case{{"--duration", "10s", "--profile"}, "profile a run with -n"}}) {
    std::vector<std::string> args{"allreduce", "--nodes", "2", "--sizes", "4K"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = testing::run_cli(args, {}, 30);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
}

// kill -9 of the launcher in the middle of a soak: the ranks die with it, and
// the file holds the last checkpoint: valid, complete records of the calls
// made so far, which compare loads.
TEST(DurationRun, AKilledSoakLeavesAValidFileWithCompleteRecords) {
  const std::string path = testing::temp_path("killed.json");
  ChildSpec spec;
  spec.argv = {testing::omni_bench_binary(), "allreduce", "--nodes", "2", "--algo", "omni,ring", "--sizes", "4K",
               "--duration", "10m", "--checkpoint-interval", "1s", "-T", "30", "-J", path};
  spec.discard_output = true;
  spec.own_process_group = true;
  auto child = start_child(spec);
  ASSERT_TRUE(child.is_ok()) << child.status().message();
  const pid_t pid = child.value().pid;
  // Wait for a checkpoint with calls in it.
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  bool checkpointed = false;
  while (!checkpointed && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    json doc = json::parse(testing::slurp(path), nullptr, false);
    checkpointed = !doc.is_discarded() && doc.contains("results") && doc["results"].size() == 2 &&
                   doc["results"][0]["duration"]["timed_calls"].get<uint64_t>() > 0;
  }
  kill(pid, SIGKILL);
  EXPECT_EQ(wait_child(pid), 128 + SIGKILL);
  ASSERT_TRUE(checkpointed) << testing::slurp(path);
  // The ranks die with their launcher.
  const auto gone_by = Clock::now() + std::chrono::seconds(10);
  while (kill(-pid, 0) == 0 && Clock::now() < gone_by) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_NE(kill(-pid, 0), 0) << "ranks outlived the launcher";
  kill(-pid, SIGKILL);

  auto loaded = load_result_file(path);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  ASSERT_EQ(loaded.value().records.size(), 2u);
  for (const auto& r : loaded.value().records) {
    ASSERT_TRUE(r.duration.has_value());
    EXPECT_FALSE(r.duration->complete);
    EXPECT_GT(r.duration->timed_calls, 0u);
    EXPECT_EQ(r.correct, true);
    EXPECT_GT(r.time_us.median, 0);
  }
  const json doc = testing::read_json(path);
  EXPECT_EQ(doc["complete"], false);
  EXPECT_TRUE(doc.contains("resources"));
  auto compared = testing::run_cli({"compare", path, path}, {}, 30);
  EXPECT_EQ(compared.exit_code, 0) << compared.out << compared.err;
}

// SIGTERM to the whole job the moment a checkpoint's temporary file exists
// (many sizes make each rewrite long enough to catch): the temporary file is
// removed on the signal path, never left beside the result. Tried until a
// signal lands while one exists (a try is a few seconds).
bool temporary_file_beside(const std::string& path, std::string* name = nullptr) {
  const std::string folder = path.substr(0, path.rfind('/'));
  const std::string prefix = path.substr(path.rfind('/') + 1) + ".tmp.";
  for (const auto& e : std::filesystem::directory_iterator(folder))
    if (e.path().filename().string().rfind(prefix, 0) == 0) {
      if (name) *name = e.path().filename();
      return true;
    }
  return false;
}

TEST(DurationRun, SigtermDuringACheckpointWriteLeavesNoTemporaryFile) {
  std::string sizes;
  for (int i = 1; i <= 60; ++i) sizes += (sizes.empty() ? "" : ",") + std::to_string(4096 * i);
  bool caught = false;
  for (int attempt = 0; attempt < 5 && !caught; ++attempt) {
    const std::string path = testing::temp_path("soak" + std::to_string(attempt) + ".json");
    ChildSpec spec;
    spec.argv = {testing::omni_bench_binary(), "allreduce", "--nodes", "2", "--algo", "omni,ring", "--sizes", sizes,
                 "--duration", "20s", "--checkpoint-interval", "1s", "-T", "30", "-J", path};
    spec.discard_output = true;
    spec.own_process_group = true;
    auto child = start_child(spec);
    ASSERT_TRUE(child.is_ok()) << child.status().message();
    const pid_t pid = child.value().pid;
    // A rewrite, not the first write: the result file is there already.
    const auto deadline = Clock::now() + std::chrono::seconds(40);
    while (!caught && Clock::now() < deadline && kill(pid, 0) == 0)
      caught = std::filesystem::exists(path) && temporary_file_beside(path);
    kill(-pid, SIGTERM);
    wait_child(pid);
    const auto gone_by = Clock::now() + std::chrono::seconds(10);
    while (kill(-pid, 0) == 0 && Clock::now() < gone_by) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    kill(-pid, SIGKILL);
    std::string left;
    EXPECT_FALSE(temporary_file_beside(path, &left)) << left << " was left beside " << path;
  }
  EXPECT_TRUE(caught) << "no signal landed while a temporary file existed";
}

// The soak check fails a build that leaks: the same run, with omni made to
// leak 1 KiB of memory or a descriptor per call, is caught and named.
struct Leak {
  const char* sabotage;
  const char* grew;  // what the finding starts with
};

class SoakCheckCatches : public ::testing::TestWithParam<Leak> {};

TEST_P(SoakCheckCatches, ALeakPerCall) {
  auto soak = testing::run_soak(testing::sabotage_binary(),
                                {"--nodes", "2", "--aggregators", "1", "--algo", "omni", "--sizes", "4K",
                                 "--duration", "3s", "-T", "30"},
                                {std::string("OMNIB_SABOTAGE_OMNI=") + GetParam().sabotage,
                                 "OMNIB_SABOTAGE_LEAK_BYTES=1024"},
                                90);
  ASSERT_TRUE(soak.resources.has_value());
  ASSERT_FALSE(soak.grew.empty()) << "the soak check passed a leaking build:\n" << soak.cli.out;
  bool named = false;
  for (const auto& g : soak.grew) named |= g.rfind(GetParam().grew, 0) == 0;
  EXPECT_TRUE(named) << soak.grew[0];
  EXPECT_EQ(soak.doc["resources"]["flat"], false);
  EXPECT_EQ(soak.doc["resources"]["verdict"], "grew");
  EXPECT_NE(soak.cli.out.find("# resources: GREW"), std::string::npos) << soak.cli.out;
}

INSTANTIATE_TEST_SUITE_P(Sabotage, SoakCheckCatches,
                         ::testing::Values(Leak{"leak-memory", "worker rss +"}, Leak{"leak-fd", "worker fds +"}),
                         [](const auto& info) { return std::string(info.param.sabotage) == "leak-fd" ? "Descriptors" : "Memory"; });

}  // namespace
}  // namespace omnib
