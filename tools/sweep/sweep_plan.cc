#include "tools/sweep/sweep_plan.h"

#include <cstdlib>

#include <CLI/CLI.hpp>

#include "tools/allreduce_options.h"

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

// Parses allreduce arguments exactly as `omni-bench allreduce` would and
// plans them for a launcher on this machine.
Result<RunPlan> plan_args(const std::vector<std::string>& args) {
  CLI::App app;
  AllreduceOptions o;
  bind_allreduce_options(app, o);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses a reversed vector
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return usage_error(std::string(e.what()));
  }
  return plan_allreduce(o, o.nodes + o.aggregators, std::nullopt);
}

// Plans the point as allreduce would, with the sweep's sizes.
Status plan_point(SweepPoint& p, const std::vector<std::string>& size_args) {
  std::vector<std::string> planned(p.args.begin() + 1, p.args.end());
  planned.insert(planned.end(), size_args.begin(), size_args.end());
  auto plan = plan_args(planned);
  if (!plan.is_ok()) return plan.status().with_context("point (" + p.description + "): ");
  if (!plan.value().trace.trace_path.empty())
    return usage_error("--trace writes one file per run and a sweep makes many: trace one "
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
      return usage_error("--aggregators '" + k + "': give counts (0 for colocated shards) or 'nodes' for one per worker");
  }
  return Status::ok();
}

Result<std::vector<SweepPoint>> expand_sweep(const SweepLists& l) {
  std::vector<SweepPoint> points;
  const std::vector<std::string> none{""};
  const auto& rates = l.link_rates.empty() ? none : l.link_rates;
  const auto& aggregators = l.aggregators.empty() ? none : l.aggregators;
  const auto& encodings = l.encodings.empty() ? none : l.encodings;
  for (const auto& n : l.nodes)
    for (const auto& k : aggregators)
      for (const auto& rate : rates)
        for (const auto& w : l.workloads)
          for (const auto& ov : l.overlaps)
            for (const auto& b : l.block_sizes)
              for (const auto& t : l.datatypes)
                for (const auto& e : encodings)
                  for (const auto& d : workload_fixes_density(w) ? none : l.densities) {
                    SweepPoint p;
                    p.args = {"allreduce", "--algo", join(l.algos, ","), "--nodes", n, "--block-size", b,
                              "--overlap", ov, "-d", t};
                    p.description = "nodes " + n;
                    if (!k.empty()) {
                      p.args.insert(p.args.end(), {"--aggregators", k == "nodes" ? n : k});
                      if (k != "0") p.description += ", aggregators " + (k == "nodes" ? n : k);
                    }
                    if (!d.empty()) {
                      p.args.insert(p.args.end(), {"--density", d});
                      p.description += ", density " + d;
                    }
                    p.description += ", block " + b;
                    if (t != "float") p.description += ", " + t;
                    if (!e.empty()) {
                      p.args.insert(p.args.end(), {"--encoding", e});
                      p.description += ", encoding " + e;
                    }
                    if (ov != "random") p.description += ", overlap " + ov;
                    if (w != "blocks") {
                      p.args.insert(p.args.end(), {"--workload", w});
                      p.description += ", workload " + w;
                    }
                    if (l.emulate || !rate.empty()) p.args.insert(p.args.end(), {"--net", "emulate"});
                    if (!rate.empty()) {
                      p.args.insert(p.args.end(), {"--link-rate", rate});
                      p.description += ", link " + rate;
                    }
                    p.args.insert(p.args.end(), l.passthrough.begin(), l.passthrough.end());
                    auto planned = plan_point(p, l.size_args);
                    if (!planned.is_ok()) return planned;
                    points.push_back(std::move(p));
                  }
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
