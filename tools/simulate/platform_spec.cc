#include "tools/simulate/platform_spec.h"

#include <algorithm>
#include <sstream>


namespace omnib {
namespace {

constexpr unsigned kDefaultLeafHosts = 32;

Result<std::vector<unsigned long>> numbers(const std::string& text, const std::string& what) {
  std::vector<unsigned long> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      size_t used = 0;
      const unsigned long v = std::stoul(item, &used);
      if (used != item.size() || v == 0) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {
      return usage_error("--topology " + what + ": '" + item + "' is not a positive whole number");
    }
  }
  if (out.empty()) return usage_error("--topology " + what + ": no numbers in '" + text + "'");
  return out;
}

std::string join_numbers(const auto& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

Result<PlatformSpec> parse_fat_tree(const std::string& args) {
  PlatformSpec spec;
  spec.kind = TopologyKind::kFatTree;
  if (args.empty()) {
    spec.leaf_hosts = kDefaultLeafHosts;
    return spec;
  }
  if (args.find(';') == std::string::npos) {
    auto k = numbers(args, "fat-tree:K");
    if (!k.is_ok()) return k.status();
    if (k.value().size() != 1) return usage_error("--topology fat-tree:K takes one number, hosts per leaf switch");
    spec.leaf_hosts = static_cast<unsigned>(k.value()[0]);
    return spec;
  }
  std::vector<std::string> parts;
  std::stringstream in(args);
  for (std::string p; std::getline(in, p, ';');) parts.push_back(p);
  if (parts.size() != 4)
    return usage_error("--topology fat-tree:LEVELS;DOWN;UP;COUNT takes four parts separated by ';' (e.g. 2;4,4;1,2;1,2)");
  auto levels = numbers(parts[0], "fat-tree levels");
  if (!levels.is_ok()) return levels.status();
  spec.levels = static_cast<unsigned>(levels.value()[0]);
  for (auto [text, out] : {std::pair{&parts[1], &spec.down}, {&parts[2], &spec.up}, {&parts[3], &spec.count}}) {
    auto v = numbers(*text, "fat-tree");
    if (!v.is_ok()) return v.status();
    if (v.value().size() != spec.levels)
      return usage_error("--topology fat-tree: every list needs one number per level (" + std::to_string(spec.levels) + ")");
    for (unsigned long x : v.value()) out->push_back(static_cast<unsigned>(x));
  }
  return spec;
}

}  // namespace

Result<PlatformSpec> parse_topology(const std::string& text) {
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string args = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (kind == "star" && args.empty()) return PlatformSpec{};
  if (kind == "fat-tree") return parse_fat_tree(args);
  if (kind == "torus") {
    auto dims = numbers(args, "torus");
    if (!dims.is_ok()) return dims.status();
    PlatformSpec spec;
    spec.kind = TopologyKind::kTorus;
    spec.dims = dims.take();
    return spec;
  }
  return usage_error("--topology '" + text + "' is not known: use star, fat-tree, fat-tree:K, fat-tree:L;D;U;C or torus:X,Y,...");
}

Status fit_to_ranks(PlatformSpec& spec, int ranks) {
  if (spec.kind == TopologyKind::kFatTree && spec.leaf_hosts > 0) {
    const unsigned k = std::min<unsigned>(spec.leaf_hosts, static_cast<unsigned>(ranks));
    if (static_cast<unsigned>(ranks) % k != 0)
      return usage_error("--topology fat-tree: " + std::to_string(ranks) + " hosts do not fill leaf switches of " +
                         std::to_string(k) + ": give fat-tree:K with K dividing the host count");
    // Each leaf: k hosts below, one link to each of k spines above.
    spec.levels = 2;
    spec.down = {k, static_cast<unsigned>(ranks) / k};
    spec.up = {1, k};
    spec.count = {1, 1};
    spec.leaf_hosts = 0;
  }
  if (spec.kind != TopologyKind::kStar && spec.hosts() != static_cast<uint64_t>(ranks))
    return usage_error("--topology " + spec.text() + " holds " + std::to_string(spec.hosts()) + " hosts, but the job has " +
                       std::to_string(ranks) + " ranks");
  return Status::ok();
}

uint64_t PlatformSpec::hosts() const {
  uint64_t n = 1;
  switch (kind) {
    case TopologyKind::kStar: return 0;  // any number
    case TopologyKind::kFatTree:
      for (unsigned d : down) n *= d;
      return down.empty() ? 0 : n;
    case TopologyKind::kTorus:
      for (unsigned long d : dims) n *= d;
      return n;
  }
  return 0;
}

std::string PlatformSpec::text() const {
  switch (kind) {
    case TopologyKind::kStar: return "star";
    case TopologyKind::kFatTree:
      if (leaf_hosts > 0) return "fat-tree:" + std::to_string(leaf_hosts);
      return "fat-tree:" + std::to_string(levels) + ";" + join_numbers(down) + ";" + join_numbers(up) + ";" +
             join_numbers(count);
    case TopologyKind::kTorus: return "torus:" + join_numbers(dims);
  }
  return "";
}

}  // namespace omnib
