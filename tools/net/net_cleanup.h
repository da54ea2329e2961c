// Finds emulated clusters by their names and removes them: the tear-down of a
// finished run, and the clean-up after runs that died without one (a SIGKILLed
// launcher leaves its namespaces, bridge and veth pairs behind).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "engine/base/status.h"

namespace omnib {

// What exists of one owner's cluster: namespaces (in /var/run/netns) and links
// in this process's namespace (the bridge and the bridge-side veth ends).
struct NetworkTrace {
  pid_t owner = 0;
  bool owner_alive = false;
  std::vector<std::string> netns;
  std::vector<std::string> links;
};

// Every cluster whose names are present, ordered by owner pid. Needs no privilege.
std::vector<NetworkTrace> find_emulated_networks();

// Deletes every link and namespace named for `owner` (their qdiscs go with
// them). Names already gone are not an error; the first real failure is
// returned after trying the rest. Deleting the bridge-side veth ends first
// removes the pairs even when a process still holds a rank's namespace.
Status remove_emulated_network(pid_t owner);

// Removes the clusters whose owner process no longer exists; appends their
// owners to `removed` when given.
Status remove_stale_networks(std::vector<pid_t>* removed = nullptr);

// True while a process with this pid exists (it may be another process that
// reused the pid: such a leftover waits for `net cleanup --all`).
bool process_alive(pid_t pid);

}  // namespace omnib
