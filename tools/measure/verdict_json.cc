#include "tools/measure/verdict_json.h"

#include <cmath>
#include <limits>

#include "tools/common/json_fields.h"

namespace omnib {
namespace {

using nlohmann::json;

constexpr double kInf = std::numeric_limits<double>::infinity();

// An interval's open end is null in JSON (which has no infinity).
json bound(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

Status read_bound(const json& j, const char* name, double open_end, double& out) {
  out = open_end;
  return read_optional_field(j, name, out);
}

json count_json(const CountChange& c) { return json{{"role", c.role}, {"rank", c.rank}, {"change", c.change}}; }

Status read_count(const json& j, const char* name, CountChange& c) {
  auto o = object_field(j, name);
  if (!o.is_ok()) return o.status();
  const json& v = *o.value();
  const std::string where = std::string(name) + ": ";
  OMNIB_RETURN_IF_ERROR(read_field(v, "role", c.role).with_context(where));
  OMNIB_RETURN_IF_ERROR(read_field(v, "rank", c.rank).with_context(where));
  if (!v.contains("change") || !v["change"].is_number_integer())
    return usage_error(std::string("field '") + name + ".change': expected an integer");
  c.change = v["change"].get<int64_t>();
  return Status::ok();
}

json rss_json(const RssTrend& t) {
  return json{{"role", t.role},
              {"rank", t.rank},
              {"per_call", t.fit.slope},
              {"low", bound(t.fit.low)},
              {"high", bound(t.fit.high)},
              {"points", t.fit.points},
              {"calls", t.rounds},
              {"projected", t.fit.slope * static_cast<double>(t.rounds)}};
}

Result<RssTrend> rss_from_json(const json& v) {
  if (!v.is_object()) return usage_error("field 'rss': expected an object or null");
  RssTrend t;
  OMNIB_RETURN_IF_ERROR(read_field(v, "role", t.role));
  OMNIB_RETURN_IF_ERROR(read_field(v, "rank", t.rank));
  OMNIB_RETURN_IF_ERROR(read_field(v, "per_call", t.fit.slope));
  OMNIB_RETURN_IF_ERROR(read_bound(v, "low", -kInf, t.fit.low));
  OMNIB_RETURN_IF_ERROR(read_bound(v, "high", kInf, t.fit.high));
  OMNIB_RETURN_IF_ERROR(read_field(v, "points", t.fit.points));
  OMNIB_RETURN_IF_ERROR(read_field(v, "calls", t.rounds));
  return t;
}

json size_json(const SizeVerdict& s) {
  json j{{"size_bytes", s.size_bytes},
         {"calls", s.rounds},
         {"verdict", resource_verdict_name(s.verdict)},
         {"rss", s.rss ? rss_json(*s.rss) : json(nullptr)},
         {"threads", count_json(s.threads)},
         {"fds", count_json(s.fds)},
         {"grew", s.grew}};
  if (!s.rss_not_judged.empty()) j["rss_not_judged"] = s.rss_not_judged;
  return j;
}

Status read_verdict_name(const json& j, ResourceVerdict& out) {
  std::string name;
  OMNIB_RETURN_IF_ERROR(read_field(j, "verdict", name));
  auto v = resource_verdict_from_name(name);
  if (!v) return usage_error("field 'verdict': '" + name.substr(0, 40) + "' is not flat, grew or too_short");
  out = *v;
  return Status::ok();
}

Status read_phrases(const json& j, std::vector<std::string>& out) {
  if (!j.contains("grew") || !j["grew"].is_array()) return usage_error("field 'grew': expected a list of phrases");
  for (const json& g : j["grew"]) {
    if (!g.is_string()) return usage_error("field 'grew': expected a list of phrases");
    out.push_back(g.get<std::string>());
  }
  return Status::ok();
}

Result<SizeVerdict> size_from_json(const json& j) {
  if (!j.is_object()) return usage_error("expected an object");
  SizeVerdict s;
  OMNIB_RETURN_IF_ERROR(read_field(j, "size_bytes", s.size_bytes));
  OMNIB_RETURN_IF_ERROR(read_field(j, "calls", s.rounds));
  OMNIB_RETURN_IF_ERROR(read_verdict_name(j, s.verdict));
  if (j.contains("rss") && !j["rss"].is_null()) {
    auto rss = rss_from_json(j["rss"]);
    if (!rss.is_ok()) return rss.status().with_context("rss: ");
    s.rss = rss.take();
  }
  OMNIB_RETURN_IF_ERROR(read_optional_field(j, "rss_not_judged", s.rss_not_judged));
  OMNIB_RETURN_IF_ERROR(read_count(j, "threads", s.threads));
  OMNIB_RETURN_IF_ERROR(read_count(j, "fds", s.fds));
  OMNIB_RETURN_IF_ERROR(read_phrases(j, s.grew));
  return s;
}

}  // namespace

void add_verdict_json(const ResourcesVerdict& v, json& block) {
  json sizes = json::array();
  for (const SizeVerdict& s : v.sizes) sizes.push_back(size_json(s));
  block["verdict"] = resource_verdict_name(v.verdict);
  block["min_calls"] = kMinRoundsToJudge;
  block["min_rss_slope_bytes"] = kMinRssSlope;
  block["sizes"] = sizes;
}

Result<std::optional<ResourcesVerdict>> verdict_from_json(const json& block) {
  if (!block.contains("verdict")) return std::optional<ResourcesVerdict>();
  ResourceVerdict overall;
  OMNIB_RETURN_IF_ERROR(read_verdict_name(block, overall));
  if (!block.contains("sizes") || !block["sizes"].is_array()) return usage_error("field 'sizes': expected an array");
  std::vector<SizeVerdict> sizes;
  for (size_t i = 0; i < block["sizes"].size(); ++i) {
    auto s = size_from_json(block["sizes"][i]);
    if (!s.is_ok()) return s.status().with_context("sizes[" + std::to_string(i) + "]: ");
    sizes.push_back(s.take());
  }
  ResourcesVerdict v = combine_sizes(std::move(sizes));
  if (v.verdict != overall)
    return usage_error(std::string("field 'verdict': '") + resource_verdict_name(overall) + "', but its sizes say '" +
                       resource_verdict_name(v.verdict) + "'");
  return std::optional<ResourcesVerdict>(std::move(v));
}

}  // namespace omnib
