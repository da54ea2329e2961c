#include "tools/local_launcher.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

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

pid_t spawn_rank(const LocalLaunchPlan& plan, int rank, const std::string& store, uint32_t job_id) {
  std::vector<std::string> args = plan.wrap_command ? plan.wrap_command(rank, plan.argv) : plan.argv;
  const std::string bind = plan.bind_host ? plan.bind_host(rank) : "127.0.0.1";
  const auto extra_env = plan.rank_env ? plan.rank_env(rank) : std::vector<std::pair<std::string, std::string>>{};
  pid_t pid = fork();
  if (pid != 0) return pid;
  // Child: die with the launcher, so no rank outlives an interrupted run.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  setenv(launch_vars::kRank, std::to_string(rank).c_str(), 1);
  setenv(launch_vars::kWorld, std::to_string(plan.world).c_str(), 1);
  setenv(launch_vars::kStore, store.c_str(), 1);
  setenv(launch_vars::kJobId, std::to_string(job_id).c_str(), 1);
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

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int launch_local(const LocalLaunchPlan& plan) {
  auto server = TcpStoreServer::start({plan.store_host, 0});
  if (!server.is_ok()) {
    std::fprintf(stderr, "omni-bench: %s\n", server.status().message().c_str());
    return exit_code(server.status().code());
  }
  std::random_device rd;
  const uint32_t job_id = rd() | 1u;

  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  struct sigaction old_int {}, old_term {};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  std::vector<pid_t> pids;
  for (int r = 0; r < plan.world; ++r) pids.push_back(spawn_rank(plan, r, server.value()->address().to_string(), job_id));

  int result = 0;
  int running = plan.world;
  bool killing = false;
  auto kill_at = std::chrono::steady_clock::time_point::max();
  while (running > 0) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      --running;
      int code = exit_code_of(status);
      if (code != 0 && result == 0) {
        // Killed-by-signal ranks (a crash) report as an internal error.
        result = code > 128 ? 1 : code;
        kill_at = std::chrono::steady_clock::now() + plan.grace;
      }
      for (auto& p : pids)
        if (p == pid) p = -1;
      continue;
    }
    if (g_interrupted && !killing) {
      for (pid_t p : pids)
        if (p > 0) kill(p, SIGTERM);
      if (result == 0) result = 130;
      kill_at = std::min(kill_at, std::chrono::steady_clock::now() + std::chrono::seconds(3));
      killing = true;
    }
    if (std::chrono::steady_clock::now() >= kill_at) {
      for (pid_t p : pids)
        if (p > 0) kill(p, SIGKILL);
      kill_at = std::chrono::steady_clock::time_point::max();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  return result;
}

}  // namespace omnib
