#include "tools/sweep/sweep_plan.h"

#include <cmath>
#include <cstdlib>
#include <set>
#include <tuple>

#include "tools/allreduce_options.h"
#include "tools/size_parse.h"

namespace omnib {

std::vector<std::string> SweepPoint::allreduce_args(const std::vector<std::string>& algos) const {
  std::string algo_list;
  for (const auto& a : algos) algo_list += (algo_list.empty() ? "" : ",") + a;
  std::string size_list;
  for (auto s : sizes) size_list += (size_list.empty() ? "" : ",") + std::to_string(s);
  std::vector<std::string> args{"--block-size", block_size, "--nodes", nodes,    "--overlap",
                                overlap,        "--algo",   algo_list, "--sizes", size_list};
  if (!aggregators.empty()) {
    args.push_back("--aggregators");
    args.push_back(aggregators);
  }
  if (!density.empty()) {
    args.push_back("--density");
    args.push_back(density);
  }
  if (workload != "blocks") {
    args.push_back("--workload");
    args.push_back(workload);
  }
  if (!link_rate.empty()) {
    args.push_back("--net");
    args.push_back("emulate");
    args.push_back("--link-rate");
    args.push_back(link_rate);
  }
  return args;
}

std::string SweepPoint::describe() const {
  std::string d = "nodes " + nodes + (density.empty() ? "" : ", density " + density) + ", block " + block_size;
  if (!aggregators.empty() && aggregators != "0") d += ", aggregators " + aggregators;
  if (overlap != "random") d += ", overlap " + overlap;
  if (workload != "blocks") d += ", workload " + workload;
  if (!link_rate.empty()) d += ", link " + link_rate;
  return d;
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

bool workload_fixes_density(const std::string& workload) {
  return workload == "npy" || workload.rfind("preset:", 0) == 0;
}

std::vector<SweepPoint> expand_sweep(const SweepLists& l,
                                     const std::function<std::string(const std::string&)>& label) {
  std::vector<SweepPoint> points;
  const std::vector<std::string> rates = l.link_rates.empty() ? std::vector<std::string>{""} : l.link_rates;
  const std::vector<std::string> aggregator_items = l.aggregators.empty() ? std::vector<std::string>{""} : l.aggregators;
  const std::vector<std::string> workload_density{""};
  for (const auto& n : l.nodes)
    for (const auto& k : aggregator_items)
      for (const auto& rate : rates)
        for (const auto& w : l.workloads)
          for (const auto& o : l.overlaps)
            for (const auto& b : l.block_sizes)
              for (const auto& d : workload_fixes_density(w) ? workload_density : l.densities)
                points.push_back(SweepPoint{d, b, n, k == "nodes" ? n : k, o, w, label ? label(w) : w, rate, l.sizes});
  return points;
}

namespace {

// Numbers in the JSON are doubles/ints; compare them as the values they are.
bool same_number(const nlohmann::json& j, const std::string& text) {
  if (!j.is_number()) return false;
  return std::fabs(j.get<double>() - std::strtod(text.c_str(), nullptr)) < 1e-12;
}

bool record_matches(const nlohmann::json& r, const SweepPoint& p, uint64_t size, const std::string& algo) {
  if (r.value("algo", "") != algo || r.value("size_bytes", uint64_t{0}) != size) return false;
  if ((!p.density.empty() && !same_number(r["density"], p.density)) || !same_number(r["block_size"], p.block_size) ||
      !same_number(r["nodes"], p.nodes))
    return false;
  // Files from before aggregators were swept have colocated shards only.
  if (r.value("aggregators", 0.0) != std::strtod(p.aggregators.empty() ? "0" : p.aggregators.c_str(), nullptr))
    return false;
  if (r.value("workload", "blocks") != p.workload_label) return false;
  // Overlap is stored normalised ("random", "full", "none" or a number).
  const std::string overlap = r.value("overlap", "random");
  if (overlap != p.overlap && !(std::strtod(overlap.c_str(), nullptr) == std::strtod(p.overlap.c_str(), nullptr) &&
                                overlap != "random" && p.overlap != "random"))
    return false;
  return r.value("link_rate", "") == p.link_rate;
}

}  // namespace

size_t drop_finished(std::vector<SweepPoint>& points, const std::vector<std::string>& algos,
                     const nlohmann::json& existing) {
  size_t dropped = 0;
  std::vector<SweepPoint> kept;
  for (auto& p : points) {
    std::vector<uint64_t> todo;
    for (uint64_t size : p.sizes) {
      bool all = true;
      for (const auto& a : algos) {
        bool found = false;
        for (const auto& r : existing)
          if (record_matches(r, p, size, a)) {
            found = true;
            break;
          }
        all = all && found;
      }
      if (all)
        ++dropped;
      else
        todo.push_back(size);
    }
    p.sizes = todo;
    if (!p.sizes.empty()) kept.push_back(p);
  }
  points = kept;
  return dropped;
}

Result<std::vector<uint64_t>> sweep_sizes(const std::string& list, const std::string& min_bytes,
                                          const std::string& max_bytes, double factor) {
  std::vector<uint64_t> sizes;
  if (!list.empty()) {
    for (const auto& item : split_list(list)) {
      auto s = parse_size(item);
      if (!s.is_ok()) return s.status();
      sizes.push_back(s.value());
    }
    return sizes;
  }
  auto lo = parse_size(min_bytes);
  auto hi = parse_size(max_bytes);
  if (!lo.is_ok()) return lo.status();
  if (!hi.is_ok()) return hi.status();
  if (lo.value() > hi.value()) return usage_error("-b/--minbytes is larger than -e/--maxbytes");
  if (!(factor > 1) && lo.value() != hi.value()) return usage_error("-f/--stepfactor must be greater than 1");
  for (long double s = static_cast<long double>(lo.value()); s <= static_cast<long double>(hi.value()); s *= factor) {
    sizes.push_back(static_cast<uint64_t>(s));
    if (!(factor > 1)) break;
  }
  return sizes;
}

}  // namespace omnib
