// How a run ends when it does not end well: an exception that escapes a
// command (in any thread) is exit 1 with one line, never an abort; Ctrl-C is
// 130; and docs/exit-codes.md says all of this.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/cli_runner.h"

namespace omnib {
namespace {

using testing::run_cli;

// The sabotage build's throwing algorithms (tests/sabotage/) reach the
// handler the way any escaped exception would.
TEST(ExitCodes, AnExceptionInMainIsAnInternalError) {
  auto r = testing::run_binary(testing::sabotage_binary(),
                               {"allreduce", "--algo", "sabotage-throw", "--nodes", "1", "-b", "4K", "-e", "4K"}, {}, 30);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("omni-bench: internal error: sabotage-throw threw in allreduce"), std::string::npos) << r.err;
}

TEST(ExitCodes, AnExceptionInAnotherThreadIsAnInternalError) {
  auto r = testing::run_binary(testing::sabotage_binary(),
                               {"allreduce", "--algo", "sabotage-throw-thread", "--nodes", "1", "-b", "4K", "-e", "4K"},
                               {}, 30);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("omni-bench: internal error: sabotage-throw-thread threw in a thread"), std::string::npos)
      << r.err;
}

// Waits up to `limit` for pid; its exit code, 128 + signal, or -1 if still running.
int wait_for(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(ExitCodes, CtrlCIs130) {
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    freopen("/dev/null", "w", stdout);
    execl(OMNIB_BINARY, OMNIB_BINARY, "allreduce", "--nodes", "2", "-b", "64K", "-e", "64K", "-n", "1000000",
          "-w", "0", "--algo", "ring", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the ranks are running
  kill(pid, SIGINT);
  const int code = wait_for(pid, std::chrono::seconds(30));
  if (code < 0) kill(-pid, SIGKILL), wait_for(pid, std::chrono::seconds(5));
  EXPECT_EQ(code, 130);
}

// A rank that crashes is reported by its signal and leaves nothing in the
// working directory, whatever the libraries linked in would do with the
// signal (tools/process/library_signals.h).
TEST(ExitCodes, ACrashedRankIsReportedByItsSignalAndLeavesNoFile) {
  const std::filesystem::path dir = testing::temp_path("cwd");
  std::filesystem::create_directory(dir);
  const std::string err_path = testing::temp_path("stderr.txt");
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    if (chdir(dir.c_str()) != 0) _exit(127);
    freopen("/dev/null", "w", stdout);
    freopen(err_path.c_str(), "w", stderr);
    execl(OMNIB_BINARY, OMNIB_BINARY, "allreduce", "--nodes", "2", "-b", "64K", "-e", "64K", "-n", "1000000",
          "-w", "0", "--algo", "ring", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the ranks are running
  std::ifstream children("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  pid_t rank = -1;
  children >> rank;
  ASSERT_GT(rank, 0) << "no rank running";
  kill(rank, SIGSEGV);
  const int code = wait_for(pid, std::chrono::seconds(30));
  if (code < 0) kill(-pid, SIGKILL), wait_for(pid, std::chrono::seconds(5));
  EXPECT_EQ(code, 1);
  const std::string err = testing::slurp(err_path);
  EXPECT_NE(err.find("was killed by signal 11"), std::string::npos) << err;
  for (const auto& left : std::filesystem::directory_iterator(dir)) ADD_FAILURE() << "left behind: " << left.path();
}

// `omni-bench allreduce ... | head`: once the reader is gone the whole job
// ends at once, quietly (no message), with 141 as a command killed by SIGPIPE
// would, and no rank is left behind.
TEST(ExitCodes, AClosedStdoutEndsTheJobQuietly) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  const std::string err_path = testing::temp_path("stderr.txt");
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    close(out[0]);
    dup2(out[1], STDOUT_FILENO);
    freopen(err_path.c_str(), "w", stderr);
    // Many small sizes: the table keeps being written long after the reader leaves.
    execl(OMNIB_BINARY, OMNIB_BINARY, "allreduce", "--nodes", "3", "-b", "4K", "-e", "4G", "--sizes",
          "4K,8K,12K,16K,20K,24K,28K,32K,36K,40K,44K,48K,52K,56K,60K,64K", "-n", "200", "-w", "0", "--algo", "ring",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  char line[256];
  size_t got = 0;
  while (got < 3) {  // the first three header lines, then the reader leaves
    if (read(out[0], line, 1) != 1) break;
    got += line[0] == '\n';
  }
  close(out[0]);
  const int code = wait_for(pid, std::chrono::seconds(30));
  if (code < 0) kill(-pid, SIGKILL), wait_for(pid, std::chrono::seconds(5));
  EXPECT_EQ(code, 141);
  EXPECT_EQ(testing::slurp(err_path), "");
  EXPECT_NE(kill(-pid, 0), 0) << "ranks outlived the job";
}

TEST(ExitCodes, DocumentedForSignalsAndCrashes) {
  const auto doc = std::filesystem::path(OMNIB_SOURCE_DIR) / "docs" / "exit-codes.md";
  const std::string text = testing::slurp(doc);
  ASSERT_FALSE(text.empty()) << doc;
  for (const char* needle : {"| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 4 |", "| 5 |", "| 6 |", "130", "134", "139", "141",
                             "omni-bench: internal error:"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << " is not in " << doc;
}

}  // namespace
}  // namespace omnib
