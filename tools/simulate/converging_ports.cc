#include "tools/simulate/converging_ports.h"

namespace omnib {
namespace sg4 = simgrid::s4u;

ConvergingPorts::ConvergingPorts(const std::vector<sg4::Host*>& hosts, double factor)
    : hosts_(hosts), factor_(factor) {}

ConvergingPorts::Port* ConvergingPorts::before_start(int src, int dst) {
  if (factor_ >= 1 || src == dst) return nullptr;
  route_.clear();
  double latency = 0;
  hosts_[static_cast<size_t>(src)]->route_to(hosts_[static_cast<size_t>(dst)], route_, &latency);
  if (route_.empty()) return nullptr;
  sg4::Link* link = route_.back();
  auto [it, added] = ports_.try_emplace(link);
  Port& port = it->second;
  if (added) {
    port.link = link;
    port.full_rate = link->get_bandwidth();
  }
  set_rate(port, false);
  return &port;
}

void ConvergingPorts::count(Port* port, int src, int delta) {
  if (port == nullptr) return;
  if (delta > 0) ++port->senders[src];
  else if (auto it = port->senders.find(src); it != port->senders.end() && --it->second == 0) port->senders.erase(it);
  set_rate(*port, port->senders.size() >= 2);
}

void ConvergingPorts::set_rate(Port& port, bool slowed) {
  if (port.slowed == slowed) return;
  port.slowed = slowed;
  port.link->set_bandwidth(slowed ? port.full_rate * factor_ : port.full_rate);
}

}  // namespace omnib
