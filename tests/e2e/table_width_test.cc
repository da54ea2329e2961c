// The default table fits 120 columns, on loopback and under --net emulate
// (its link columns too), every comment line included; the first line under
// the table is the headline, omni against the best dense algorithm.
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli_runner.h"

namespace omnib {
namespace {

void expect_narrow(const testing::CliResult& run) {
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::istringstream lines(run.out);
  std::string line, previous;
  bool table = false, headline_checked = false;
  while (std::getline(lines, line)) {
    EXPECT_LE(line.size(), 120u) << line;
    if (line.rfind("algo ", 0) == 0) table = true;
    // The first comment line after the last row: the rows end where the
    // footer's "# Name      :" lines start.
    if (table && !headline_checked && line.rfind("# ", 0) == 0 && line.find(" : ") != std::string::npos) {
      EXPECT_EQ(line.rfind("# omni vs best dense", 0), 0u) << line;
      headline_checked = true;
    }
  }
  EXPECT_TRUE(headline_checked) << run.out;
}

TEST(TableWidth, TheDefaultJobFits120Columns) {
  expect_narrow(testing::run_cli({"allreduce", "--density", "0.1", "-b", "1M", "-e", "2M", "-n", "3", "-w", "1"}));
}

TEST(TableWidth, AnEmulatedJobFits120ColumnsWithItsLinkColumns) {
  if (geteuid() != 0) GTEST_SKIP() << "--net emulate needs root";
  const auto run = testing::run_cli({"allreduce", "--density", "0.1", "-b", "1M", "-e", "1M", "-n", "3", "-w", "1",
                                     "--net", "emulate", "--link-rate", "1gbit"},
                                    {}, 240);
  expect_narrow(run);
  EXPECT_NE(run.out.find("link/rank"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace omnib
