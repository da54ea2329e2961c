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

namespace {

using Clock = std::chrono::steady_clock;

// The started ranks until every one has ended: what each ended with, and
// when the launcher stops waiting for the others (a failure gives the
// survivors plan.grace; an interrupt, 3 s after SIGTERM; then SIGKILL).
class RankWatch {
 public:
  RankWatch(std::vector<pid_t> pids, TcpStoreServer& server, Clock::duration grace)
      : pids_(std::move(pids)), server_(server), grace_(grace) {
    for (pid_t p : pids_) running_ += p > 0;
  }

  // The ranks already started wait for one that never comes: end them now.
  void spawn_failed() {
    server_.post_abort(static_cast<int>(pids_.size()) - 1, "could not be started");
    kill_at_ = Clock::now() + grace_;
  }

  // Waits until every rank has ended; returns the run's verdict.
  const RunVerdict& wait_all() {
    while (running_ > 0) {
      int status = 0;
      const pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid > 0) {
        ended(pid, status);
        continue;
      }
      escalate();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return verdict_;
  }

 private:
  void ended(pid_t pid, int status) {
    auto it = std::find(pids_.begin(), pids_.end(), pid);
    if (it == pids_.end()) return;
    const int rank = static_cast<int>(it - pids_.begin());
    *it = -1;
    --running_;
    verdict_.add(status, killing_);
    const bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    if (!failed || killing_) return;
    // A crashed rank says nothing itself.
    if (WIFSIGNALED(status)) std::fprintf(stderr, "omni-bench: rank %d %s\n", rank, describe_exit(status).c_str());
    // Ranks waiting in the store learn it at once, not after -T.
    server_.post_abort(rank, describe_exit(status));
    kill_at_ = std::min(kill_at_, Clock::now() + grace_);
  }

  void signal_all(int sig) {
    for (pid_t p : pids_)
      if (p > 0) kill(p, sig);
  }

  void escalate() {
    if (g_interrupted && !killing_) {
      signal_all(SIGTERM);
      kill_at_ = std::min(kill_at_, Clock::now() + std::chrono::seconds(3));
      killing_ = true;
    }
    if (Clock::now() >= kill_at_) {
      killing_ = true;
      signal_all(SIGKILL);
      kill_at_ = Clock::time_point::max();
    }
  }

  std::vector<pid_t> pids_;
  TcpStoreServer& server_;
  const Clock::duration grace_;
  int running_ = 0;
  RunVerdict verdict_;
  bool killing_ = false;  // from here on, ranks die by our signals
  Clock::time_point kill_at_ = Clock::time_point::max();
};

}  // namespace

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
  struct sigaction old_int {
  }, old_term{};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  std::vector<pid_t> pids;
  for (int r = 0; r < plan.world && (pids.empty() || pids.back() > 0); ++r) pids.push_back(spawn_rank(plan, r, job));
  const bool spawn_failed = pids.back() < 0;
  RankWatch watch(std::move(pids), *server.value(), plan.grace);
  if (spawn_failed) watch.spawn_failed();
  const int code = watch.wait_all().code(g_interrupted != 0);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  return spawn_failed ? exit_code(Code::kInternal) : code;
}

}  // namespace omnib
