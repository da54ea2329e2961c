// One emulated cluster: a Linux bridge in the caller's network namespace (the
// "switch"), and per rank a network namespace joined to it by a veth pair whose
// two ends are shaped with tc (the rank's egress inside its namespace, its
// ingress on the bridge side), so every rank has its own full-duplex link.
// See docs/emulation.md for what this does and does not model.
#pragma once

#include <functional>
#include <memory>

#include "engine/base/status.h"
#include "tools/config/link_shape.h"
#include "tools/net/net_plan.h"
#include "tools/net/rank_tcp.h"

namespace omnib {

class EmulatedNetwork {
 public:
  // Removes leftovers of dead runs, then builds the cluster for `world` ranks,
  // named for this process's pid (one cluster per process at a time). Blocks
  // while it runs ip and tc (a few ms per command). `cancelled` is polled
  // between steps: when it returns true, what was built is removed and the
  // result is kUnavailable "interrupted". On any failure nothing is left.
  // `tcp` is written into every rank's namespace (rank_tcp.h).
  static Result<std::unique_ptr<EmulatedNetwork>> create(int world, const LinkShape& shape, const RankTcp& tcp = {},
                                                         const std::function<bool()>& cancelled = {});

  // Tears the cluster down (see tear_down).
  ~EmulatedNetwork();
  EmulatedNetwork(const EmulatedNetwork&) = delete;
  EmulatedNetwork& operator=(const EmulatedNetwork&) = delete;

  // Removes every namespace, link and qdisc of the cluster; safe to call more
  // than once. Ranks should have exited (a rank still inside a namespace keeps
  // it alive, unnamed and unreachable, until it exits).
  Status tear_down();

  const NetPlan& plan() const { return plan_; }
  const LinkShape& shape() const { return shape_; }

 private:
  EmulatedNetwork(NetPlan plan, LinkShape shape, RankTcp tcp)
      : plan_(std::move(plan)), shape_(shape), tcp_(std::move(tcp)) {}
  Status build(const std::function<bool()>& cancelled);

  NetPlan plan_;
  LinkShape shape_;
  RankTcp tcp_;
  bool torn_down_ = false;
};

}  // namespace omnib
