#include "tools/local_launcher.h"

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
#include "tools/launch_env.h"

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

pid_t spawn_rank(const LocalLaunchPlan& plan, int rank, const JobIdentity& job) {
  std::vector<std::string> args = plan.wrap_command ? plan.wrap_command(rank, plan.argv) : plan.argv;
  const std::string bind = plan.bind_host ? plan.bind_host(rank) : "127.0.0.1";
  const auto extra_env = plan.rank_env ? plan.rank_env(rank) : std::vector<std::pair<std::string, std::string>>{};
  const pid_t launcher = getpid();
  pid_t pid = fork();
  if (pid != 0) return pid;
  // Child: die with the launcher, so no rank outlives an interrupted run
  // (also when the launcher died before the request took effect).
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != launcher) _exit(1);
  setenv(launch_vars::kRank, std::to_string(rank).c_str(), 1);
  setenv(launch_vars::kWorld, std::to_string(plan.world).c_str(), 1);
  setenv(launch_vars::kStore, job.store.c_str(), 1);
  setenv(launch_vars::kJobId, std::to_string(job.job_id).c_str(), 1);
  setenv(launch_vars::kJobToken, job.token_hex.c_str(), 1);
  setenv(launch_vars::kBind, bind.c_str(), 1);
  for (const auto& [name, value] : extra_env) setenv(name.c_str(), value.c_str(), 1);
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  if (args[0].find('/') != std::string::npos)
    execv(args[0].c_str(), cargs.data());
  else
    execvp(args[0].c_str(), cargs.data());
  std::fprintf(stderr, "omni-bench: could not start rank %d (%s): %s\n", rank, args[0].c_str(), std::strerror(errno));
  _exit(6);
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
  for (int r = 0; r < plan.world; ++r) pids.push_back(spawn_rank(plan, r, job));

  RunVerdict verdict;
  int running = plan.world;
  bool killing = false;  // from here on, ranks die by our signals
  auto kill_at = std::chrono::steady_clock::time_point::max();
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
  return verdict.code(g_interrupted != 0);
}

}  // namespace omnib
