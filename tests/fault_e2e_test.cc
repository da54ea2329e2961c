// A dead or silent peer makes every rank exit non-zero within the timeout,
// instead of hanging. Ranks are started the way an external launcher would
// (torchrun-style RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT), so the test can
// kill or stop one of them.
#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "engine/transport/socket_util.h"
#include "tests/cli_runner.h"

namespace omnib {
namespace {

using Clock = std::chrono::steady_clock;

int free_port() {
  auto fd = listen_on({"127.0.0.1", 0});
  int port = local_address(fd.value()).value().port;
  close(fd.value());
  return port;
}

pid_t start_rank(int rank, int world, int port, const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  setenv("RANK", std::to_string(rank).c_str(), 1);
  setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  std::vector<char*> argv;
  std::string binary = OMNIB_BINARY;
  argv.push_back(binary.data());
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int devnull = open("/dev/null", O_WRONLY);
  dup2(devnull, 1);
  dup2(devnull, 2);
  execv(binary.c_str(), argv.data());
  _exit(127);
}

// Waits for `pid` until `deadline`; returns its exit code, or -1 if still running.
int wait_until(pid_t pid, Clock::time_point deadline) {
  while (Clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

class PeerFailure : public ::testing::TestWithParam<int> {};

TEST_P(PeerFailure, EveryOtherRankExitsNonZeroWithinTheTimeout) {
  const int signal_to_send = GetParam();
  constexpr int kWorld = 3;
  constexpr int kTimeoutSeconds = 3;
  const int port = free_port();
  // Many iterations: the run is still going when the victim is hit.
  std::vector<std::string> args{"allreduce", "--algo", "omni", "-b", "256K", "-e", "256K", "-n", "1000000",
                                "-w", "0", "-T", std::to_string(kTimeoutSeconds), "--density", "0.1"};
  std::vector<pid_t> pids;
  for (int r = 0; r < kWorld; ++r) pids.push_back(start_rank(r, kWorld, port, args));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const int victim = 1;
  kill(pids[victim], signal_to_send);
  const auto hit = Clock::now();
  // Allowed: the timeout for the wait in progress, plus one more for a store
  // wait, plus slack for a loaded 2-core machine.
  const auto deadline = hit + std::chrono::seconds(2 * kTimeoutSeconds + 5);
  // A silent peer is noticed as a timeout (exit 4) by whoever waits on it
  // first; the others may instead see that rank's links close (exit 6).
  bool someone_timed_out = false;
  for (int r = 0; r < kWorld; ++r) {
    if (r == victim) continue;
    int code = wait_until(pids[r], deadline);
    EXPECT_NE(code, -1) << "rank " << r << " still running after the timeout";
    EXPECT_NE(code, 0) << "rank " << r;
    someone_timed_out |= code == 4;
  }
  if (signal_to_send == SIGSTOP) EXPECT_TRUE(someone_timed_out) << "a silent peer must be reported as a timeout";
  for (pid_t p : pids) {
    kill(p, SIGKILL);
    waitpid(p, nullptr, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Signals, PeerFailure, ::testing::Values(SIGKILL, SIGSTOP),
                         [](const auto& info) { return info.param == SIGKILL ? "dead_peer" : "silent_peer"; });

}  // namespace
}  // namespace omnib
