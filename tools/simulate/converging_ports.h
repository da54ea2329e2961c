// The replay's model of a switch port that several senders feed at once.
//
// A flow-level simulation shares a port's rate among the flows through it
// and wastes none of it. Over TCP, senders converging on a port whose queue
// their windows can overflow lose packets there and back off, and the port
// then carries less than its rate: the emulated tree and sparcml-split,
// whose inner ranks and owners hear from two or more peers at once, lost
// hundreds of segments per call at 4 and 8 workers and took 1.1-1.25x the
// flow model's time (docs/simulation.md, "Converging senders"). So while the
// link down to a host carries flows from two or more senders, its rate is
// the calibration's incast_factor of the link's; one sender (however many
// of its messages are in flight) keeps the whole rate, and a protocol that
// holds its senders to a byte budget below the port's buffer
// (MessageSchedule::flows_budgeted, omni) is never slowed.
#pragma once

#include <simgrid/s4u.hpp>

#include <unordered_map>
#include <vector>

namespace omnib {

class ConvergingPorts {
 public:
  // `hosts`: the ranks' hosts; `factor` 1: the model is off (no state kept).
  ConvergingPorts(const std::vector<simgrid::s4u::Host*>& hosts, double factor);

  // A message from `src` to `dst` started, or its last byte left.
  void started(int src, int dst) { count(src, dst, +1); }
  void finished(int src, int dst) { count(src, dst, -1); }

  // The link into each rank's host: the last one on a route to it.
  static std::vector<simgrid::s4u::Link*> links_into(const std::vector<simgrid::s4u::Host*>& hosts);

 private:
  void count(int src, int dst, int delta);

  const double factor_;
  std::vector<simgrid::s4u::Link*> ports_;            // into rank r's host
  std::vector<double> full_rate_;                     // each port's own bandwidth
  std::vector<std::unordered_map<int, int>> senders_;  // per port: messages in flight per sender
};

}  // namespace omnib
