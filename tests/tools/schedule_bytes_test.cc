// Every message schedule (tools/schedule) puts on the wire what its
// algorithm's analytic model counts (CollectiveInfo::analytic_cost), rank by
// rank, for real inputs of the workloads: the simulator replays the bytes
// the reports model. And a schedule broken on purpose fails the check.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "engine/collective/collective.h"
#include "tools/allreduce/input_reference.h"
#include "tools/schedule/dense_schedules.h"
#include "tools/schedule/schedule_catalog.h"
#include "tools/workloads/workload.h"

namespace omnib {
namespace {

struct Case {
  int nodes;
  size_t count;
  double density;
  uint64_t link_rate_bps = 100'000'000;
  int aggregators = 0;
  RoutePolicy route = RoutePolicy::kAuto;
  std::string overlap = "random";
};

// Inputs generated as the harness does; the support outlives the inputs.
struct Generated {
  PreparedInputs prepared;
  CostInputs cost;
};

Generated generate(const Case& k) {
  WorkloadSpec spec;
  spec.density = k.density;
  spec.nodes = k.nodes;
  spec.overlap = parse_overlap(k.overlap).value();
  auto workload = make_workload(spec);
  EXPECT_TRUE(workload.is_ok());
  std::vector<float> mine(k.count), reference(k.count), scratch(k.count);
  auto view = [&](std::vector<float>& v) { return TensorView{v.data(), k.count, DType::kFloat32, DeviceKind::kCpu}; };
  Generated g;
  g.prepared = prepare_inputs(*workload.value(), 0, k.nodes, spec.block_size, view(mine), view(reference),
                              view(scratch), true);
  g.cost.nodes = k.nodes;
  g.cost.aggregators = k.aggregators;
  g.cost.count = k.count;
  g.cost.elem_size = 4;
  g.cost.stats = g.prepared.stats;
  g.cost.omni.link_rate_bps = k.link_rate_bps;
  g.cost.omni.route = k.route;
  g.cost.support = g.prepared.support.get();
  return g;
}

// What the schedule sends per rank against what the model says: the most
// any rank sends and the total. Returns "" when they agree.
std::string disagreement(const std::string& algo, const MessageSchedule& s, const CostInputs& c) {
  const CollectiveInfo* info = CollectiveRegistry::instance().find(algo);
  if (info == nullptr) return "no algorithm " + algo;
  const WireCost model = info->analytic_cost(c);
  const std::vector<uint64_t> sent = s.sent_per_rank();
  const std::vector<uint64_t> received = s.received_per_rank();
  const uint64_t total = std::accumulate(sent.begin(), sent.end(), uint64_t{0});
  const uint64_t max = sent.empty() ? 0 : *std::max_element(sent.begin(), sent.end());
  if (total != std::accumulate(received.begin(), received.end(), uint64_t{0})) return "sent != received";
  // The dense models count from the size alone; the sparse ones must have counted.
  if (info->exploits_sparsity && !model.exact) return algo + ": the model estimated instead of counting";
  if (static_cast<double>(total) != model.sent_total || static_cast<double>(max) != model.sent_per_rank_max)
    return algo + ": schedule sends " + std::to_string(total) + " in all, at most " + std::to_string(max) +
           " per rank; the model " + std::to_string(model.sent_total) + ", " + std::to_string(model.sent_per_rank_max);
  return "";
}

class ScheduleBytes : public ::testing::TestWithParam<Case> {};

TEST_P(ScheduleBytes, EveryScheduleSendsWhatItsModelCounts) {
  const Generated g = generate(GetParam());
  for (const std::string& algo : scheduled_algorithms()) {
    if (GetParam().aggregators > 0 && algo != "omni" && algo != "ps") continue;  // only omni has aggregators
    ScheduleInputs in;
    in.cost = g.cost;
    const MessageSchedule s = (*find_schedule(algo))(in);
    EXPECT_EQ(disagreement(algo, s, g.cost), "") << "nodes " << GetParam().nodes << " density "
                                                  << GetParam().density;
    EXPECT_GT(s.network_messages(), 0u) << algo;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, ScheduleBytes,
    ::testing::Values(Case{2, 1 << 16, 0.1}, Case{3, 100003, 0.01}, Case{4, 1 << 18, 0.1}, Case{8, 1 << 18, 1.0},
                      Case{5, 1 << 18, 0.05, 25'000'000}, Case{4, 1 << 18, 0.1, 0, 2},
                      Case{6, 1 << 18, 0.002, 100'000'000, 0, RoutePolicy::kDirect},
                      Case{4, 1 << 18, 0.01, 1'000'000'000, 0, RoutePolicy::kAuto, "none"}));

// Paced fan-outs reorder the messages, never their bytes.
TEST(ScheduleBytes, PacedFanOutsSendTheSameBytes) {
  const Generated g = generate(Case{8, 1 << 18, 0.1});
  for (const std::string algo : {"omni", "sparcml-split"}) {
    ScheduleInputs in;
    in.cost = g.cost;
    in.flows.concurrent_flow_budget = 1;
    const MessageSchedule s = (*find_schedule(algo))(in);
    EXPECT_FALSE(s.note().empty()) << algo;
    EXPECT_EQ(disagreement(algo, s, g.cost), "") << algo;
  }
}

// The check catches a schedule that drops a frame's header: one ring
// message fewer bytes than the protocol sends.
TEST(ScheduleBytes, ABrokenScheduleFailsTheCheck) {
  const Generated g = generate(Case{4, 1 << 18, 1.0});
  ScheduleInputs in;
  in.cost = g.cost;
  const MessageSchedule good = ring_schedule(in);
  MessageSchedule broken(good.ranks());
  for (size_t i = 0; i < good.messages().size(); ++i) {
    const ScheduledMessage& m = good.messages()[i];
    const auto deps = good.deps_of(m);
    broken.add(m.src, m.dst, i == 3 ? m.bytes - sizeof(wire::FrameHeader) : m.bytes, deps, m.compute_s);
  }
  EXPECT_EQ(disagreement("ring", good, g.cost), "");
  EXPECT_NE(disagreement("ring", broken, g.cost), "");
}

// The engine's streams (omni, and ps, which runs on it) hold their senders
// to a byte budget wherever the link rate is known; the other protocols'
// flows only to TCP's windows: the port model (converging_ports.h) slows
// only theirs.
TEST(MessageSchedule, SaysWhetherAByteBudgetHoldsItsFlows) {
  Generated g = generate(Case{4, 1 << 18, 0.1});
  for (const std::string& algo : scheduled_algorithms()) {
    ScheduleInputs in;
    in.cost = g.cost;
    const bool engine = algo == "omni" || algo == "ps";
    EXPECT_EQ((*find_schedule(algo))(in).flows_budgeted(), engine) << algo;
    in.cost.omni.link_rate_bps = 0;  // a rate nobody knows: no budget
    EXPECT_FALSE((*find_schedule(algo))(in).flows_budgeted()) << algo;
  }
}

TEST(MessageSchedule, RefusesForwardDependenciesAndStrangers) {
  MessageSchedule s(2);
  const uint32_t a = s.add(0, 1, 10, {});
  EXPECT_THROW(s.add(0, 1, 10, {{a + 1, false}}), std::logic_error);
  EXPECT_THROW(s.add(0, 2, 10, {}), std::out_of_range);
  const uint32_t j = s.join(1, std::vector<MessageDep>{{a, false}});
  EXPECT_TRUE(s.messages()[j].local());
  EXPECT_EQ(s.sent_per_rank(), (std::vector<uint64_t>{10, 0}));
  EXPECT_EQ(s.network_messages(), 1u);
}

}  // namespace
}  // namespace omnib
