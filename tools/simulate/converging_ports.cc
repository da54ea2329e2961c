#include "tools/simulate/converging_ports.h"

namespace omnib {
namespace sg4 = simgrid::s4u;

ConvergingPorts::ConvergingPorts(const std::vector<sg4::Host*>& hosts, double factor) : factor_(factor) {
  if (factor_ >= 1 || hosts.size() < 2) return;
  ports_ = links_into(hosts);
  for (sg4::Link* port : ports_) full_rate_.push_back(port ? port->get_bandwidth() : 0);
  senders_.resize(ports_.size());
}

std::vector<sg4::Link*> ConvergingPorts::links_into(const std::vector<sg4::Host*>& hosts) {
  std::vector<sg4::Link*> into;
  std::vector<sg4::Link*> route;
  for (size_t r = 0; r < hosts.size(); ++r) {
    route.clear();
    double latency = 0;
    hosts[r == 0 ? 1 : 0]->route_to(hosts[r], route, &latency);
    into.push_back(route.empty() ? nullptr : route.back());
  }
  return into;
}

void ConvergingPorts::count(int src, int dst, int delta) {
  if (ports_.empty() || src == dst) return;
  const auto d = static_cast<size_t>(dst);
  if (ports_[d] == nullptr) return;
  auto& in_flight = senders_[d];
  const bool converged_before = in_flight.size() >= 2;
  if (delta > 0) ++in_flight[src];
  else if (auto it = in_flight.find(src); it != in_flight.end() && --it->second == 0) in_flight.erase(it);
  const bool converged = in_flight.size() >= 2;
  if (converged != converged_before) ports_[d]->set_bandwidth(converged ? full_rate_[d] * factor_ : full_rate_[d]);
}

}  // namespace omnib
