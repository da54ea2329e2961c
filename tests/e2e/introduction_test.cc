// `omni-bench` with no arguments: what it is, the three commands to start
// with, and every subcommand; and those commands are true: the quick run is
// README's first command, and the sweep, its plot and the CI gate run as
// printed (only their files moved into a temporary folder).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "tests/support/cli_runner.h"
#include "tools/cli/introduction.h"

namespace omnib {
namespace {

namespace fs = std::filesystem;
using testing::run_cli;

// A printed command line as arguments, with every file or folder it names
// (x.json, figures/) put in `dir`.
std::vector<std::string> arguments_in(const std::string& line, const std::string& dir) {
  std::vector<std::string> args;
  std::istringstream words(line);
  for (std::string w; words >> w;) {
    const bool is_path = w.ends_with(".json") || w.ends_with("/");
    args.push_back(is_path ? dir + "/" + w : w);
  }
  return args;
}

TEST(Introduction, NoArgumentsSaysWhatItIsAndWhereToStart) {
  const auto r = run_cli({});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("block-sparse allreduce engine"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("benchmark"), std::string::npos) << r.out;
  ASSERT_EQ(starting_commands().size(), 3u) << "a quick run, a sweep and its plot, the CI gate";
  for (const auto& c : starting_commands()) {
    for (const auto& line : c.lines) EXPECT_NE(r.out.find("omni-bench " + line + "\n"), std::string::npos) << line;
    EXPECT_NE(r.out.find(c.what), std::string::npos) << c.what;
  }
  for (const char* sub : {"allreduce", "list", "sweep", "compare", "net", "trace", "plot"})
    EXPECT_NE(r.out.find("\n  " + std::string(sub) + " "), std::string::npos) << sub << " is not listed:\n" << r.out;
}

TEST(Introduction, AnUnknownArgumentIsStillAUsageError) {
  const auto r = run_cli({"--no-such-flag"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

TEST(Introduction, TheQuickRunIsReadmesFirstCommand) {
  const std::string readme = testing::slurp(std::string(OMNIB_SOURCE_DIR) + "/README.md");
  const std::string quick = starting_commands().front().lines.front();
  EXPECT_NE(readme.find("ci/setup.sh && ./build/omni-bench " + quick + "\n"), std::string::npos)
      << "README's first command is not `omni-bench " << quick << "`";
}

TEST(Introduction, TheSweepItsPlotAndTheGateRunAsPrinted) {
  const std::string dir = fs::path(testing::temp_path("start")).string();
  fs::create_directories(dir);
  const auto& commands = starting_commands();
  for (const auto& line : commands[1].lines) {
    const auto r = run_cli(arguments_in(line, dir), {}, 300);
    ASSERT_EQ(r.exit_code, 0) << line << "\n" << r.err;
  }
  EXPECT_FALSE(fs::is_empty(dir + "/figures")) << "the plot drew nothing";
  // The gate judges a run against itself here: nothing can have regressed.
  fs::copy_file(dir + "/sweep.json", dir + "/baseline.json");
  fs::copy_file(dir + "/sweep.json", dir + "/current.json");
  const auto gate = run_cli(arguments_in(commands[2].lines.front(), dir));
  EXPECT_EQ(gate.exit_code, 0) << gate.out << gate.err;
}

}  // namespace
}  // namespace omnib
