#include "tools/launch/local_launcher.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include "engine/bootstrap/tcp_store.h"
#include "tools/launch/launch_env.h"
#include "tools/process/child_process.h"

namespace omnib {
namespace {

volatile sig_atomic_t g_interrupted = 0;
void on_interrupt(int) { g_interrupted = 1; }

// What every rank of this run is told about the job.
struct JobIdentity {
  std::string store;
  uint32_t job_id;
  std::string token_hex;
};

// Starts rank `rank`; -1 when it could not be forked. A rank that cannot be
// executed exits 6 (unavailable) after saying why.
pid_t spawn_rank(const LocalLaunchPlan& plan, int rank, const JobIdentity& job) {
  ChildSpec spec;
  spec.argv = plan.wrap_command ? plan.wrap_command(rank, plan.argv) : plan.argv;
  spec.env = {{launch_vars::kRank, std::to_string(rank)},
              {launch_vars::kWorld, std::to_string(plan.world)},
              {launch_vars::kStore, job.store},
              {launch_vars::kJobId, std::to_string(job.job_id)},
              {launch_vars::kJobToken, job.token_hex},
              {launch_vars::kBind, plan.bind_host ? plan.bind_host(rank) : "127.0.0.1"},
              {launch_vars::kLauncherPid, std::to_string(getpid())}};
  if (plan.rank_env)
    for (auto& entry : plan.rank_env(rank)) spec.env.push_back(std::move(entry));
  // No rank outlives an interrupted run.
  spec.die_with_parent = true;
  spec.exec_failure_code = exit_code(Code::kUnavailable);
  spec.exec_failure_message = "omni-bench: could not start rank " + std::to_string(rank) + " (" + spec.argv[0] + "): ";
  auto child = start_child(spec);
  if (!child.is_ok()) {
    std::fprintf(stderr, "omni-bench: rank %d: %s\n", rank, child.status().message().c_str());
    return -1;
  }
  return child.value().pid;
}

int fail(const Status& s) {
  std::fprintf(stderr, "omni-bench: %s\n", s.message().c_str());
  return exit_code(s.code());
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  return "exited with code " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

void RunVerdict::add(int status, bool killed_by_us) {
  if (WIFSIGNALED(status)) {
    crashed_ |= !killed_by_us;
    return;
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  if (code == 0) return;
  int& slot = code == exit_code(Code::kUnavailable) ? first_unavailable_ : first_failure_;
  if (slot == 0) slot = code;
}

int RunVerdict::code(bool interrupted) const {
  if (crashed_) return exit_code(Code::kInternal);
  if (first_failure_) return first_failure_;
  if (first_unavailable_) return first_unavailable_;
  return interrupted ? 130 : 0;
}

int launch_local(const LocalLaunchPlan& plan) {
  auto token = JobToken::random();
  if (!token.is_ok()) return fail(token.status());
  // A thousand local ranks need more descriptors than the usual soft limit.
  raise_descriptor_limit();
  auto server = TcpStoreServer::start({plan.store_host, 0}, token.value());
  if (!server.is_ok()) return fail(server.status());
  std::random_device rd;
  const JobIdentity job{server.value()->address().to_string(), rd() | 1u, token.value().hex()};

  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  struct sigaction old_int {}, old_term {};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  std::vector<pid_t> pids;
  int running = 0;
  for (int r = 0; r < plan.world && (pids.empty() || pids.back() > 0); ++r) {
    pids.push_back(spawn_rank(plan, r, job));
    running += pids.back() > 0;
  }
  const bool spawn_failed = pids.back() < 0;

  RunVerdict verdict;
  bool killing = false;  // from here on, ranks die by our signals
  auto kill_at = std::chrono::steady_clock::time_point::max();
  if (spawn_failed) {
    // The ranks already started wait for one that never comes: end them now.
    server.value()->post_abort(static_cast<int>(pids.size()) - 1, "could not be started");
    kill_at = std::chrono::steady_clock::now() + plan.grace;
  }
  while (running > 0) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      auto it = std::find(pids.begin(), pids.end(), pid);
      if (it == pids.end()) continue;
      const int rank = static_cast<int>(it - pids.begin());
      *it = -1;
      --running;
      verdict.add(status, killing);
      const bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
      if (failed && !killing) {
        // A crashed rank says nothing itself.
        if (WIFSIGNALED(status)) std::fprintf(stderr, "omni-bench: rank %d %s\n", rank, describe_exit(status).c_str());
        // Ranks waiting in the store learn it at once, not after -T.
        server.value()->post_abort(rank, describe_exit(status));
        kill_at = std::min(kill_at, std::chrono::steady_clock::now() + plan.grace);
      }
      continue;
    }
    if (g_interrupted && !killing) {
      for (pid_t p : pids)
        if (p > 0) kill(p, SIGTERM);
      kill_at = std::min(kill_at, std::chrono::steady_clock::now() + std::chrono::seconds(3));
      killing = true;
    }
    if (std::chrono::steady_clock::now() >= kill_at) {
      killing = true;
      for (pid_t p : pids)
        if (p > 0) kill(p, SIGKILL);
      kill_at = std::chrono::steady_clock::time_point::max();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (spawn_failed) return exit_code(Code::kInternal);
  return verdict.code(g_interrupted != 0);
}

}  // namespace omnib
