#include "tests/rank_launcher.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "engine/transport/socket_util.h"

namespace omnib::testing {
namespace {

using Clock = std::chrono::steady_clock;

// A loopback port nothing listens on right now (-1 if none could be had).
int free_port() {
  auto listener = listen_on({"127.0.0.1", 0});
  if (!listener.is_ok()) return -1;
  const int port = local_address(listener.value()).value().port;
  close(listener.value());
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

}  // namespace

std::vector<RankExit> hit_one_rank(const std::vector<std::string>& args, const PeerHit& hit) {
  const int port = free_port();
  if (port < 0) {
    ADD_FAILURE() << "no free loopback port";
    return {};
  }
  std::vector<pid_t> pids;
  for (int r = 0; r < hit.world; ++r) pids.push_back(start_rank(r, hit.world, port, args));
  std::this_thread::sleep_for(hit.settle);
  kill(pids[hit.victim], hit.signal);
  const auto deadline = Clock::now() + hit.grace;
  std::vector<RankExit> exits;
  for (int r = 0; r < hit.world; ++r)
    if (r != hit.victim) exits.push_back({r, wait_until(pids[r], deadline)});
  for (pid_t p : pids) {
    kill(p, SIGKILL);
    waitpid(p, nullptr, 0);
  }
  return exits;
}

}  // namespace omnib::testing
