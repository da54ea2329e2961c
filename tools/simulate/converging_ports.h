// The replay's model of a switch port that several senders feed at once.
//
// A flow-level simulation shares a port's rate among the flows through it
// and wastes none of it. Over TCP, senders converging on a port whose queue
// their windows can overflow lose packets there and back off, and the port
// then carries less than its rate: the emulated tree and sparcml-split,
// whose inner ranks and owners hear from two or more peers at once, lost
// hundreds of segments per call at 4 and 8 workers and took 1.1-1.25x the
// flow model's time (docs/simulation.md, "Converging senders"). So while the
// link a message enters its receiver through (the last on its route: a
// star's port, a fat tree's leaf link down to the host, a torus's link from
// the neighbour it arrives from) carries messages from two or more senders,
// its rate is the calibration's incast_factor of the link's; one sender
// (however many of its messages are in flight) keeps the whole rate, and a
// protocol that holds its senders to a byte budget below the port's buffer
// (MessageSchedule::flows_budgeted, omni) is never slowed.
#pragma once

#include <simgrid/s4u.hpp>

#include <unordered_map>

namespace omnib {

class ConvergingPorts {
 public:
  struct Port {
    simgrid::s4u::Link* link = nullptr;
    double full_rate = 0;
    std::unordered_map<int, int> senders;  // messages in flight per sender
    bool slowed = false;
  };

  // `factor` 1: the model is off (nothing kept).
  explicit ConvergingPorts(double factor) : factor_(factor) {}
  bool on() const { return factor_ < 1; }

  // Before a message starts whose route ends at `link` (its receiver's
  // port): the port (nullptr when the model is off), at its full rate,
  // because SimGrid caps a transfer at the slowest link of its route as it
  // starts, for the transfer's life; the port's rate is set again once the
  // message is counted.
  Port* before_start(simgrid::s4u::Link* link);
  // The message started (on `port`, from `src`), or its last byte left.
  void started(Port* port, int src) { count(port, src, +1); }
  void finished(Port* port, int src) { count(port, src, -1); }

 private:
  void count(Port* port, int src, int delta);
  void set_rate(Port& port, bool slowed);

  const double factor_;
  std::unordered_map<simgrid::s4u::Link*, Port> ports_;  // node-based: Port* stay valid
};

}  // namespace omnib
