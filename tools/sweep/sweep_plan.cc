#include "tools/sweep/sweep_plan.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <functional>

#include "tools/allreduce/allreduce_options.h"
#include "tools/common/option_values.h"
#include "tools/simulate/simulation_plan.h"

namespace omnib {
namespace {

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

bool workload_fixes_density(const std::string& workload) {
  return workload == "npy" || workload.rfind("preset:", 0) == 0;
}

// Plans allreduce arguments as `omni-bench allreduce` would for a launcher
// on this machine, or simulate arguments as `omni-bench simulate` would
// (the simulated configurations: net "simulate", the platform).
Result<RunPlan> plan_args(const std::vector<std::string>& args, bool simulate) {
  if (simulate) {
    SimulateOptions o;
    OMNIB_RETURN_IF_ERROR(parse_as_command(args, o, bind_simulate_options));
    auto plan = plan_simulation(o);
    if (!plan.is_ok()) return plan.status();
    return std::move(plan.value().run);
  }
  AllreduceOptions o;
  OMNIB_RETURN_IF_ERROR(parse_as_command(args, o, bind_allreduce_options));
  return plan_allreduce(o, o.nodes + o.aggregators, std::nullopt);
}

// Plans the point as its command would, with the sweep's sizes.
Status plan_point(SweepPoint& p, const std::vector<std::string>& size_args) {
  std::vector<std::string> planned(p.args.begin() + 1, p.args.end());
  planned.insert(planned.end(), size_args.begin(), size_args.end());
  auto plan = plan_args(planned, p.args.front() == "simulate");
  if (!plan.is_ok()) return plan.status().with_context("point (" + p.description + "): ");
  if (!plan.value().trace.trace_path.empty())
    return usage_error(
        "--trace writes one file per run and a sweep makes many: trace one "
        "configuration with `omni-bench allreduce --trace` (--profile works here)");
  p.plan = plan.take();
  p.todo = p.plan.sizes;
  return Status::ok();
}

}  // namespace

std::vector<std::string> SweepPoint::allreduce_args(const std::string& json) const {
  std::vector<std::string> a = args;
  std::vector<std::string> sizes;
  for (uint64_t s : todo) sizes.push_back(std::to_string(s));
  a.insert(a.end(), {"--sizes", join(sizes, ","), "-J", json, "--force"});
  return a;
}

Status check_aggregator_list(const std::vector<std::string>& aggregators) {
  for (const auto& k : aggregators) {
    if (k == "nodes") continue;
    char* end = nullptr;
    const long v = std::strtol(k.c_str(), &end, 10);
    if (k.empty() || *end != '\0' || v < 0)
      return usage_error("--aggregators '" + k +
                         "': give counts (0 for colocated shards) or 'nodes' for one per worker");
  }
  return Status::ok();
}

namespace {

// One value of every swept dimension: a point of the cross product.
struct Choice {
  std::string nodes, aggregators, rate, workload, overlap, block, dtype, encoding, density;
};

// Calls `visit` with every combination of one value per list, the first list
// outermost, until it fails.
Status for_each_combination(const std::vector<const std::vector<std::string>*>& lists,
                            const std::function<Status(const std::vector<std::string>&)>& visit) {
  for (const auto* list : lists)
    if (list->empty()) return Status::ok();
  std::vector<size_t> at(lists.size(), 0);
  std::vector<std::string> values(lists.size());
  while (true) {
    for (size_t i = 0; i < lists.size(); ++i) values[i] = (*lists[i])[at[i]];
    OMNIB_RETURN_IF_ERROR(visit(values));
    size_t i = lists.size();
    while (i > 0 && ++at[i - 1] == lists[i - 1]->size()) at[--i] = 0;  // the last list turns fastest
    if (i == 0) return Status::ok();
  }
}

// The allreduce arguments and description of one choice; empty values take
// allreduce's defaults.
SweepPoint point_of(const SweepLists& l, const Choice& c) {
  SweepPoint p;
  p.args = {l.simulate ? "simulate" : "allreduce",
            "--algo",
            join(l.algos, ","),
            "--nodes",
            c.nodes,
            "--block-size",
            c.block,
            "--overlap",
            c.overlap,
            "-d",
            c.dtype};
  p.description = "nodes " + c.nodes;
  if (!c.aggregators.empty()) {
    const std::string k = c.aggregators == "nodes" ? c.nodes : c.aggregators;
    p.args.insert(p.args.end(), {"--aggregators", k});
    if (k != "0") p.description += ", aggregators " + k;
  }
  if (!c.density.empty()) {
    p.args.insert(p.args.end(), {"--density", c.density});
    p.description += ", density " + c.density;
  }
  p.description += ", block " + c.block;
  if (c.dtype != "float") p.description += ", " + c.dtype;
  if (!c.encoding.empty()) {
    p.args.insert(p.args.end(), {"--encoding", c.encoding});
    p.description += ", encoding " + c.encoding;
  }
  if (c.overlap != "random") p.description += ", overlap " + c.overlap;
  if (c.workload != "blocks") {
    p.args.insert(p.args.end(), {"--workload", c.workload});
    p.description += ", workload " + c.workload;
  }
  if (!l.simulate && (l.emulate || !c.rate.empty())) p.args.insert(p.args.end(), {"--net", "emulate"});
  if (!c.rate.empty()) {
    p.args.insert(p.args.end(), {"--link-rate", c.rate});
    p.description += ", link " + c.rate;
  }
  p.args.insert(p.args.end(), l.passthrough.begin(), l.passthrough.end());
  return p;
}

}  // namespace

uint64_t count_sweep_points(const SweepLists& l) {
  auto times = [](uint64_t a, uint64_t b) {
    uint64_t product = 0;
    return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
  };
  auto or_one = [](const std::vector<std::string>& list) { return std::max<uint64_t>(list.size(), 1); };
  uint64_t per_workload = 0;  // density values summed over workloads
  for (const auto& w : l.workloads) {
    const uint64_t densities = workload_fixes_density(w) ? 1 : or_one(l.densities);
    per_workload = per_workload > UINT64_MAX - densities ? UINT64_MAX : per_workload + densities;
  }
  uint64_t n = per_workload;
  for (const auto* list : {&l.nodes, &l.overlaps, &l.block_sizes, &l.datatypes}) n = times(n, list->size());
  for (const auto* list : {&l.aggregators, &l.link_rates, &l.encodings}) n = times(n, or_one(*list));
  return n;
}

Status check_sweep_size(const SweepLists& l) {
  const uint64_t n = count_sweep_points(l);
  if (n <= kMaxSweepPoints) return Status::ok();
  const std::string count = n == UINT64_MAX ? "more than 2^64" : std::to_string(n);
  return usage_error("the lists make " + count + " points (" + std::to_string(l.nodes.size()) + " node counts x " +
                     std::to_string(l.densities.size()) + " densities x " + std::to_string(l.block_sizes.size()) +
                     " block sizes x ...); a sweep runs at most " + std::to_string(kMaxSweepPoints) +
                     ": split it into several sweeps with their own -J files (compare and plot read them together)");
}

Result<std::vector<SweepPoint>> expand_sweep(const SweepLists& l) {
  std::vector<SweepPoint> points;
  const std::vector<std::string> none{""};
  auto or_none = [&](const std::vector<std::string>& list) -> const std::vector<std::string>* {
    return list.empty() ? &none : &list;
  };
  // Nodes outermost (ranks relaunch least), density innermost.
  const std::vector<const std::vector<std::string>*> axes = {
      &l.nodes,       or_none(l.aggregators), or_none(l.link_rates), &l.workloads,        &l.overlaps,
      &l.block_sizes, &l.datatypes,           or_none(l.encodings),  or_none(l.densities)};
  const Status walked = for_each_combination(axes, [&](const std::vector<std::string>& v) {
    Choice c{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]};
    if (workload_fixes_density(c.workload)) {
      if (c.density != axes[8]->front()) return Status::ok();  // the workload's density, once
      c.density.clear();
    }
    SweepPoint p = point_of(l, c);
    OMNIB_RETURN_IF_ERROR(plan_point(p, l.size_args));
    points.push_back(std::move(p));
    return Status::ok();
  });
  if (!walked.is_ok()) return walked;
  return points;
}

std::set<std::string> finished_keys(const std::vector<ResultRecord>& records) {
  std::set<std::string> keys;
  for (const auto& r : records)
    if (r.finished()) keys.insert(r.algo + "|" + r.config.key_text());
  return keys;
}

size_t drop_unfinished(std::vector<ResultRecord>& records) {
  return std::erase_if(records, [](const ResultRecord& r) { return !r.finished(); });
}

size_t drop_finished(std::vector<SweepPoint>& points, const std::set<std::string>& finished) {
  size_t dropped = 0;
  std::vector<SweepPoint> kept;
  for (auto& p : points) {
    std::vector<uint64_t> todo;
    for (size_t k = 0; k < p.plan.sizes.size(); ++k) {
      const std::string config = p.plan.config(k).key_text();
      bool all = true;
      for (const auto& a : p.plan.algos) all = all && finished.count(a + "|" + config);
      if (all)
        ++dropped;
      else
        todo.push_back(p.plan.sizes[k]);
    }
    p.todo = todo;
    if (!p.todo.empty()) kept.push_back(std::move(p));
  }
  points = std::move(kept);
  return dropped;
}

}  // namespace omnib
