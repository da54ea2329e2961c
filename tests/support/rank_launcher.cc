#include "tests/support/rank_launcher.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "engine/sockets/socket_util.h"
#include "tests/support/cli_runner.h"

namespace omnib::testing {
namespace {

using Clock = std::chrono::steady_clock;

pid_t start_rank(int rank, int world, int port, const std::vector<std::string>& args,
                 const std::vector<std::string>& env, const std::string& stderr_path) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  setenv("RANK", std::to_string(rank).c_str(), 1);
  setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
  std::vector<char*> argv;
  std::string binary = omni_bench_binary();
  argv.push_back(binary.data());
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int devnull = open("/dev/null", O_WRONLY);
  dup2(devnull, 1);
  int err = stderr_path.empty() ? devnull : open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(err, 2);
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

int free_loopback_port() {
  auto listener = listen_on({"127.0.0.1", 0});
  if (!listener.is_ok()) return -1;
  const int port = local_address(listener.value()).value().port;
  close(listener.value());
  return port;
}

StartedRanks start_ranks(const std::vector<std::string>& args, int world, const std::vector<std::string>& env,
                         const std::vector<std::string>& stderr_paths, int held_back) {
  StartedRanks ranks{args, env, stderr_paths, free_loopback_port(), std::vector<pid_t>(static_cast<size_t>(world), -1)};
  if (ranks.port < 0) {
    ADD_FAILURE() << "no free loopback port";
    ranks.pids.clear();
    return ranks;
  }
  for (int r = 0; r < world; ++r)
    if (r != held_back) start_held_rank(ranks, r);
  return ranks;
}

void start_held_rank(StartedRanks& ranks, int rank) {
  const auto r = static_cast<size_t>(rank);
  ranks.pids[r] = start_rank(rank, static_cast<int>(ranks.pids.size()), ranks.port, ranks.args, ranks.env,
                             r < ranks.stderr_paths.size() ? ranks.stderr_paths[r] : "");
}

std::vector<RankEnd> wait_ranks(const StartedRanks& ranks, std::chrono::milliseconds limit) {
  const auto start = Clock::now();
  std::vector<RankEnd> ends(ranks.pids.size(), RankEnd{-1, 0});
  size_t left = ranks.pids.size();
  while (left > 0 && Clock::now() - start < limit) {
    for (size_t r = 0; r < ranks.pids.size(); ++r) {
      int status = 0;
      if (ends[r].code != -1 || waitpid(ranks.pids[r], &status, WNOHANG) != ranks.pids[r]) continue;
      ends[r] = {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                 std::chrono::duration<double>(Clock::now() - start).count()};
      --left;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (size_t r = 0; r < ranks.pids.size(); ++r) {
    if (ends[r].code != -1) continue;
    kill(ranks.pids[r], SIGKILL);
    waitpid(ranks.pids[r], nullptr, 0);
  }
  return ends;
}

std::vector<RankExit> hit_one_rank(const std::vector<std::string>& args, const PeerHit& hit) {
  const StartedRanks ranks = start_ranks(args, hit.world);
  if (ranks.pids.empty()) return {};
  const std::vector<pid_t>& pids = ranks.pids;
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
