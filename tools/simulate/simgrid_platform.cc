#include "tools/simulate/simgrid_platform.h"

#include <string>

namespace omnib {
namespace sg4 = simgrid::s4u;
namespace {

std::string host_name(unsigned long rank) { return "rank" + std::to_string(rank); }

std::vector<sg4::Host*> star(const PlatformSpec& spec, int ranks, double bytes_per_s) {
  auto* zone = sg4::create_star_zone("cluster");
  std::vector<sg4::Host*> hosts;
  for (int r = 0; r < ranks; ++r) {
    sg4::Host* h = zone->create_host(host_name(static_cast<unsigned long>(r)), kSimulatedHostFlops);
    // Split duplex: each direction its own rate, as a full-duplex NIC and
    // the emulated veth links have. The route to the switch goes UP, the
    // way back (symmetrical) DOWN.
    sg4::Link* link = zone->create_split_duplex_link("link" + std::to_string(r), bytes_per_s)->set_latency(0);
    zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr,
                    {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
    hosts.push_back(h);
  }
  zone->seal();
  return hosts;
}

// Fat trees and tori: SimGrid's cluster zones, one host per leaf.
sg4::ClusterCallbacks host_callbacks() {
  return sg4::ClusterCallbacks([](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) {
    sg4::Host* h = zone->create_host(host_name(id), kSimulatedHostFlops);
    return std::make_pair(h->get_netpoint(), static_cast<simgrid::kernel::routing::NetPoint*>(nullptr));
  });
}

}  // namespace

std::vector<sg4::Host*> build_platform(const PlatformSpec& spec, int ranks) {
  const double bytes_per_s = static_cast<double>(spec.link_rate_bps) / 8;
  if (spec.kind == TopologyKind::kStar) return star(spec, ranks, bytes_per_s);
  sg4::NetZone* zone = nullptr;
  if (spec.kind == TopologyKind::kFatTree) {
    zone = sg4::create_fatTree_zone("cluster", nullptr, sg4::FatTreeParams(spec.levels, spec.down, spec.up, spec.count),
                                    host_callbacks(), bytes_per_s, 0, sg4::Link::SharingPolicy::SPLITDUPLEX);
  } else {
    zone = sg4::create_torus_zone("cluster", nullptr, spec.dims, host_callbacks(), bytes_per_s, 0,
                                  sg4::Link::SharingPolicy::SPLITDUPLEX);
  }
  zone->seal();
  std::vector<sg4::Host*> hosts;
  for (int r = 0; r < ranks; ++r) hosts.push_back(sg4::Host::by_name(host_name(static_cast<unsigned long>(r))));
  return hosts;
}

}  // namespace omnib
