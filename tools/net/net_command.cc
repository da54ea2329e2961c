#include "tools/net/net_command.h"

#include <cstdio>

#include "tools/net/net_cleanup.h"
#include "tools/net/net_lock.h"
#include "tools/net/net_requirements.h"

namespace omnib {

CLI::App* add_net_command(CLI::App& app, NetCommandOptions& options) {
  auto* net = app.add_subcommand("net", "manage the emulated clusters of --net emulate (docs/emulation.md)");
  net->require_subcommand(1);
  options.cleanup = net->add_subcommand(
      "cleanup", "remove namespaces, veth links and qdiscs left by emulated runs that died (e.g. SIGKILLed)");
  options.cleanup->add_flag("--all", options.all,
                            "also remove clusters whose owner pid is running (only if that pid was reused)");
  return net;
}

int run_net_command(const NetCommandOptions& options) {
  NetLock lock;  // not while another run is building its cluster
  auto traces = find_emulated_networks();
  bool any_to_remove = false;
  for (const auto& t : traces) any_to_remove |= options.all || !t.owner_alive;
  if (any_to_remove && !has_net_admin_privileges()) {
    std::fprintf(stderr,
                 "omni-bench: removing emulated networks needs CAP_NET_ADMIN and CAP_SYS_ADMIN: run as root "
                 "(e.g. sudo omni-bench net cleanup)\n");
    return exit_code(Code::kUnavailable);
  }
  Status first = Status::ok();
  for (const auto& t : traces) {
    if (t.owner_alive && !options.all) {
      std::printf("kept   the cluster of running process %d (%zu namespaces, %zu links); --all removes it\n",
                  static_cast<int>(t.owner), t.netns.size(), t.links.size());
      continue;
    }
    Status s = remove_emulated_network(t.owner);
    if (s.is_ok()) {
      std::printf("removed the cluster of %s process %d (%zu namespaces, %zu links)\n",
                  t.owner_alive ? "running" : "finished", static_cast<int>(t.owner), t.netns.size(),
                  t.links.size());
    } else {
      std::fprintf(stderr, "omni-bench: %s\n", s.message().c_str());
      if (first.is_ok()) first = s;
    }
  }
  if (traces.empty()) std::printf("no emulated networks found\n");
  return first.is_ok() ? 0 : exit_code(first.code());
}

}  // namespace omnib
