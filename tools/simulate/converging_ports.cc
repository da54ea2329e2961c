#include "tools/simulate/converging_ports.h"

namespace omnib {
namespace sg4 = simgrid::s4u;

ConvergingPorts::Port* ConvergingPorts::before_start(sg4::Link* link) {
  if (!on() || link == nullptr) return nullptr;
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
