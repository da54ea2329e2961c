#include "tools/net/net_cleanup.h"

#include <dirent.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <map>

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
    trace.owner_alive = process_alive(owner);
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
