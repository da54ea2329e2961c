// omni-bench under real launchers on this host: Open MPI's mpirun, and srun
// and docs/omni-bench.sbatch on a one-node Slurm cluster that
// ci/slurm_single_node.sh starts around the Srun and Sbatch tests (ctest runs
// them that way; tests/CMakeLists.txt). Each runs one 4-rank job that must be
// one correct, authenticated job; the same job with the rank environment or
// the token withheld from the ranks must be caught by the same checks.
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/launchers/launched_job.h"

namespace omnib::testing {
namespace {

// A launcher's command line, or a failure that says how to install it.
std::vector<std::string> launcher_command(const std::string& tool, const std::string& package,
                                          std::vector<std::string> args) {
  const std::string path = find_on_path(tool);
  if (path.empty()) {
    ADD_FAILURE() << tool << " is not on PATH: install " << package << " (ci/setup.sh does)";
    return {};
  }
  args.insert(args.begin(), path);
  return args;
}

// One launcher: how to start four ranks with it, what the ranks must call it
// (the JSON's environment.launcher), and the variables a rank reads its rank
// and size from under it (tools/launch/launch_env.cc; PMI_* too, in case the
// launcher sets those as well).
struct Launcher {
  std::string name;  // the JSON's "mpirun", "slurm"
  std::vector<std::string> rank_vars;
  LaunchSpec (*spec)();
};
void PrintTo(const Launcher& l, std::ostream* os) { *os << l.name; }

LaunchSpec mpirun_spec() {
  // Root in CI; four ranks on two cores. -x: what a user exports to every
  // host (here all ranks share mpirun's environment anyway).
  LaunchSpec spec;
  spec.launcher = launcher_command("mpirun", "openmpi-bin",
                                   {"--allow-run-as-root", "--oversubscribe", "-np", "4", "-x", "MASTER_ADDR", "-x",
                                    "MASTER_PORT", "-x", "OMNIB_JOB_TOKEN"});
  return spec;
}

void expect_slurm_cluster() {
  if (!std::getenv("SLURM_CONF"))
    ADD_FAILURE() << "SLURM_CONF is not set: run this test through ci/slurm_single_node.sh, which starts a one-node "
                     "Slurm cluster for it (ctest does)";
}

LaunchSpec srun_spec() {
  expect_slurm_cluster();
  LaunchSpec spec;
  spec.launcher =
      launcher_command("srun", "slurm-client", {"-n", "4", "--export=ALL", "--time=5", "--kill-on-bad-exit=1"});
  return spec;
}

const Launcher kMpirun{"mpirun", {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE"}, mpirun_spec};
const Launcher kSrun{"slurm", {"SLURM_PROCID", "SLURM_NTASKS", "PMI_RANK", "PMI_SIZE"}, srun_spec};

void expect_one_correct_job(const LaunchSpec& spec, const std::string& launcher) {
  ASSERT_FALSE(spec.launcher.empty());
  const LaunchedJob job = run_launched_job(spec);
  const auto problems = launched_job_problems(job, spec, launcher);
  EXPECT_TRUE(problems.empty()) << joined_lines(problems) << "stdout:\n" << job.cli.out;
}

// The sabotage: the checks must find `expected` among the job's problems.
void expect_caught(const LaunchSpec& spec, const std::string& launcher, const std::string& expected) {
  ASSERT_FALSE(spec.launcher.empty());
  const LaunchedJob job = run_launched_job(spec);
  const auto problems = launched_job_problems(job, spec, launcher);
  bool found = false;
  for (const auto& p : problems) found = found || p.find(expected) != std::string::npos;
  EXPECT_TRUE(found) << "expected a problem with '" << expected << "'; found:\n" << joined_lines(problems);
}

class LaunchedBy : public ::testing::TestWithParam<Launcher> {};

TEST_P(LaunchedBy, FourRanksRunOneCorrectAuthenticatedJob) {
  expect_one_correct_job(GetParam().spec(), GetParam().name);
}

TEST_P(LaunchedBy, RanksThatCannotSeeTheirRankAreCaught) {
  LaunchSpec spec = GetParam().spec();
  spec.withheld = GetParam().rank_vars;
  expect_caught(spec, GetParam().name, "not " + GetParam().name);
}

TEST_P(LaunchedBy, AJobWithoutTheTokenIsCaught) {
  LaunchSpec spec = GetParam().spec();
  spec.export_token = false;
  // Unset in the ranks: an empty token is refused outright (exit 2), which
  // would hide whether the job runs unauthenticated.
  spec.withheld = {"OMNIB_JOB_TOKEN"};
  expect_caught(spec, GetParam().name, "not authenticated");
}

// ctest runs Mpirun/* alone and Srun/* inside ci/slurm_single_node.sh.
INSTANTIATE_TEST_SUITE_P(Mpirun, LaunchedBy, ::testing::Values(kMpirun), [](const auto&) { return "mpirun"; });
INSTANTIATE_TEST_SUITE_P(Srun, LaunchedBy, ::testing::Values(kSrun), [](const auto&) { return "srun"; });

// docs/omni-bench.sbatch as the docs say to use it: it chooses MASTER_ADDR
// (the allocation's first node), MASTER_PORT and the token itself.
TEST(Sbatch, TheDocumentedScriptRunsOneCorrectAuthenticatedJob) {
  const std::string output = temp_path("sbatch.out");
  expect_slurm_cluster();
  LaunchSpec spec;
  spec.launcher = launcher_command("sbatch", "slurm-client",
                                   {"--parsable", "--nodes=1", "--ntasks=4", "--ntasks-per-node=4",
                                    "--output=" + output,
                                    std::string(OMNIB_SOURCE_DIR) + "/docs/omni-bench.sbatch"});
  spec.export_token = false;
  spec.export_rendezvous = false;
  spec.batch = true;
  spec.output_file = output;
  expect_one_correct_job(spec, "slurm");
}

}  // namespace
}  // namespace omnib::testing
