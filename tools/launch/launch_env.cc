#include "tools/launch/launch_env.h"

#include <cstdint>
#include <cstdlib>

#include "engine/sockets/socket_util.h"
#include "tools/launch/host_tasks.h"

namespace omnib {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

Result<int> env_int(const char* name, int min) {
  const char* v = env(name);
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < min || x > 1 << 20)
    return usage_error(std::string(name) + "='" + v + "' is not a valid rank or size");
  return static_cast<int>(x);
}

// One launcher's pair of rank/size variables.
struct Source {
  const char* launcher;
  const char* rank_var;
  const char* size_var;
};

// Unset: an unauthenticated run (said in the header and the JSON). Set but
// empty: a mistake (a variable that was meant to be filled), never taken for
// "no secret".
Result<std::optional<JobToken>> token_from_env() {
  const char* text = std::getenv(launch_vars::kJobToken);
  if (!text) return std::optional<JobToken>();
  if (!*text)
    return usage_error(std::string(launch_vars::kJobToken) +
                       " is set but empty: an empty secret protects nothing. Export the same 32 hex digits to every "
                       "rank (e.g. " +
                       launch_vars::kJobToken +
                       "=$(openssl rand -hex 16)), or unset it to run "
                       "unauthenticated");
  auto token = JobToken::parse_hex(text, launch_vars::kJobToken);
  if (!token.is_ok()) return token.status();
  return std::optional<JobToken>(token.value());
}

// A rank the local launcher started: its variables are ours (launch_vars).
Result<LaunchEnv> own_launch_env() {
  LaunchEnv e;
  auto r = env_int(launch_vars::kRank, 0);
  auto w = env_int(launch_vars::kWorld, 1);
  if (!r.is_ok()) return r.status();
  if (!w.is_ok()) return w.status();
  if (!env(launch_vars::kStore)) return usage_error(std::string(launch_vars::kStore) + " is not set");
  e.rank = r.value();
  e.world = w.value();
  e.launcher = "omni-bench";
  e.host_tasks = e.world;  // every rank on this machine
  e.store_address = env(launch_vars::kStore);
  e.bind_host = env(launch_vars::kBind) ? env(launch_vars::kBind) : "127.0.0.1";
  if (env(launch_vars::kJobId)) e.job_id = static_cast<uint32_t>(std::strtoul(env(launch_vars::kJobId), nullptr, 10));
  if (const char* pid = env(launch_vars::kLauncherPid)) {
    char* end = nullptr;
    const long x = std::strtol(pid, &end, 10);
    if (*end != '\0' || x < 1 || x > INT32_MAX)
      return usage_error(std::string(launch_vars::kLauncherPid) + "='" + pid + "' is not a process id");
    e.launcher_pid = static_cast<int>(x);
  }
  return e;
}

// A rank of another launcher (`s`): rank and size from its variables, the
// rendezvous at MASTER_ADDR:MASTER_PORT, hosted by rank 0. No value for a
// job of one task (it launches locally as usual).
Result<std::optional<LaunchEnv>> foreign_launch_env(const Source& s) {
  if (!env(s.rank_var) || !env(s.size_var))
    return usage_error(std::string(s.launcher) + " environment is incomplete: set both " + s.rank_var + " and " +
                       s.size_var);
  auto r = env_int(s.rank_var, 0);
  auto w = env_int(s.size_var, 1);
  if (!r.is_ok()) return r.status();
  if (!w.is_ok()) return w.status();
  if (r.value() >= w.value())
    return usage_error(std::string(s.rank_var) + "=" + std::to_string(r.value()) + " is not below " + s.size_var + "=" +
                       std::to_string(w.value()));
  LaunchEnv e;
  e.rank = r.value();
  e.world = w.value();
  e.launcher = s.launcher;
  e.host_tasks = host_tasks_from_env(s.launcher);
  if (e.world == 1) return std::optional<LaunchEnv>();
  const char* addr = env("MASTER_ADDR");
  const char* port = env("MASTER_PORT");
  if (!addr || !port)
    return usage_error(std::string(s.launcher) + " started " + std::to_string(e.world) +
                       " ranks, but MASTER_ADDR and MASTER_PORT are not set: export them (the host and a free port "
                       "of rank 0) so the ranks can rendezvous; omni-bench will not run " +
                       std::to_string(e.world) + " independent jobs");
  e.store_address = std::string(addr) + ":" + port;
  e.host_store = e.rank == 0;
  if (env(launch_vars::kBind)) {
    e.bind_host = env(launch_vars::kBind);
  } else {
    auto src = route_source_address(addr);
    if (!src.is_ok()) return src.status().with_context("choosing the interface to reach MASTER_ADDR: ");
    e.bind_host = src.value();
  }
  return std::optional<LaunchEnv>(e);
}

}  // namespace

std::string rendezvous_mode(const LaunchEnv& env) { return env.token ? "authenticated" : "unauthenticated"; }

Result<std::optional<LaunchEnv>> detect_launch_env() {
  // Read only for a launched rank: the local launcher makes its own.
  auto token = token_from_env();
  Result<std::optional<LaunchEnv>> found = std::optional<LaunchEnv>();
  if (env(launch_vars::kRank)) {
    auto own = own_launch_env();
    if (!own.is_ok()) return own.status();
    found = std::optional<LaunchEnv>(own.take());
  } else {
    const Source sources[] = {
        {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"mpich", "PMI_RANK", "PMI_SIZE"},
        {"slurm", "SLURM_PROCID", "SLURM_NTASKS"},
        {"torchrun", "RANK", "WORLD_SIZE"},
    };
    for (const auto& s : sources) {
      if (!env(s.rank_var) && !env(s.size_var)) continue;
      found = foreign_launch_env(s);
      break;
    }
  }
  if (!found.is_ok() || !found.value()) return found;
  if (!token.is_ok()) return token.status();
  found.value()->token = token.value();
  return found;
}

}  // namespace omnib
