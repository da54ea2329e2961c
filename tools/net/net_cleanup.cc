#include "tools/net/net_cleanup.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <map>
#include <sstream>

#include "tools/net/command_runner.h"
#include "tools/net/net_plan.h"

namespace omnib {
namespace {

// Where `ip netns add` keeps its namespace handles (iproute2's NETNS_RUN_DIR).
constexpr const char* kNetnsDir = "/var/run/netns";
constexpr const char* kLinksDir = "/sys/class/net";

std::vector<std::string> entries_of(const char* dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir);
  if (!d) return names;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

bool already_gone(const std::string& err) {
  return err.find("Cannot find device") != std::string::npos || err.find("No such file") != std::string::npos ||
         err.find("does not exist") != std::string::npos;
}

// Runs a deletion; a target that vanished meanwhile is fine.
Status delete_quietly(const std::vector<std::string>& argv) {
  auto r = run_command(argv);
  if (!r.is_ok()) return r.status();
  if (r.value().exit_code == 0 || already_gone(r.value().err)) return Status::ok();
  return run_checked(argv);  // again, for the message (and in case it was transient)
}

// When process `pid` started, in seconds since the epoch (0: unknown).
double process_start_time(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t after_name = text.rfind(')');
  if (after_name == std::string::npos) return 0;
  std::istringstream fields(text.substr(after_name + 2));
  std::string field;
  // Field 22 of proc(5), starttime: the 20th after the name.
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  if (field.empty() || field.find_first_not_of("0123456789") != std::string::npos) return 0;
  std::ifstream boot("/proc/stat");
  for (std::string key; boot >> key;) {
    if (key != "btime") continue;
    double btime = 0;
    boot >> btime;
    return btime + std::stod(field) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  return 0;
}

// The oldest of a cluster's namespace handles: when its launcher made it.
double created_at(const std::vector<std::string>& netns) {
  double oldest = 0;
  for (const auto& name : netns) {
    struct stat st {};
    if (stat((std::string(kNetnsDir) + "/" + name).c_str(), &st) != 0) continue;
    const double t = static_cast<double>(st.st_mtime);
    if (oldest == 0 || t < oldest) oldest = t;
  }
  return oldest;
}

// Whether the cluster's launcher still runs: its pid is alive and was not
// taken since by a newer process (pids wrap at 32768 on many hosts: a
// process that started after the cluster was made is not its launcher).
bool owner_alive(pid_t owner, const std::vector<std::string>& netns) {
  if (!process_alive(owner)) return false;
  const double made = created_at(netns), started = process_start_time(owner);
  return made == 0 || started == 0 || started <= made + 1;
}

}  // namespace

bool process_alive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

std::vector<NetworkTrace> find_emulated_networks() {
  std::map<pid_t, NetworkTrace> by_owner;
  for (const auto& name : entries_of(kNetnsDir))
    if (auto owner = net_name_owner(name)) by_owner[*owner].netns.push_back(name);
  for (const auto& name : entries_of(kLinksDir))
    if (auto owner = net_name_owner(name)) by_owner[*owner].links.push_back(name);
  std::vector<NetworkTrace> traces;
  for (auto& [owner, trace] : by_owner) {
    trace.owner = owner;
    trace.owner_alive = owner_alive(owner, trace.netns);
    traces.push_back(trace);
  }
  return traces;
}

Status remove_emulated_network(pid_t owner) {
  const std::string prefix = net_name_prefix(owner);
  Status first = Status::ok();
  auto keep_first = [&first](const Status& s) {
    if (first.is_ok() && !s.is_ok()) first = s;
  };
  // Bridge-side veth ends first (each takes its pair along), then the bridge.
  std::vector<std::string> links;
  for (const auto& name : entries_of(kLinksDir))
    if (name.rfind(prefix, 0) == 0) links.push_back(name);
  std::stable_partition(links.begin(), links.end(), [&](const std::string& n) { return n != prefix + "br"; });
  for (const auto& name : links) keep_first(delete_quietly({"ip", "link", "del", "dev", name}));
  for (const auto& name : entries_of(kNetnsDir))
    if (name.rfind(prefix, 0) == 0) keep_first(delete_quietly({"ip", "netns", "del", name}));
  return first;
}

Status remove_stale_networks(std::vector<pid_t>* removed) {
  Status first = Status::ok();
  for (const auto& trace : find_emulated_networks()) {
    if (trace.owner_alive) continue;
    Status s = remove_emulated_network(trace.owner);
    if (s.is_ok() && removed) removed->push_back(trace.owner);
    if (first.is_ok() && !s.is_ok()) first = s;
  }
  return first;
}

}  // namespace omnib
