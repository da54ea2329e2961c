#include "tools/measure/resources_report.h"

#include <algorithm>
#include <cstdlib>

#include "tools/common/json_fields.h"
#include "tools/measure/verdict_json.h"

namespace omnib {
namespace {

using nlohmann::json;

constexpr const char* kRoles[] = {kLauncherRole, kWorkerRole, kAggregatorRole};

int64_t change(uint64_t start, uint64_t end) { return static_cast<int64_t>(end) - static_cast<int64_t>(start); }

void keep_larger(Growth& g, int64_t c, int rank) {
  if (g.rank == -2 || std::llabs(c) > std::llabs(g.change)) g = {c, rank};
}

RoleResources summarize_role(const char* role, const std::vector<const ProcessResources*>& mine) {
  RoleResources r;
  r.role = role;
  r.processes = static_cast<int>(mine.size());
  r.rss_bytes = r.threads = r.fds = Growth{0, -2};  // -2: none seen yet
  for (const ProcessResources* p : mine) {
    r.peak_rss_bytes = std::max(r.peak_rss_bytes, p->end.peak_rss_bytes);
    for (auto field : {&ResourceSample::rss_bytes, &ResourceSample::threads, &ResourceSample::fds}) {
      r.start.*field = std::max(r.start.*field, p->start.*field);
      r.end.*field = std::max(r.end.*field, p->end.*field);
    }
    r.end.peak_rss_bytes = r.peak_rss_bytes;
    keep_larger(r.rss_bytes, change(p->start.rss_bytes, p->end.rss_bytes), p->rank);
    keep_larger(r.threads, change(p->start.threads, p->end.threads), p->rank);
    keep_larger(r.fds, change(p->start.fds, p->end.fds), p->rank);
  }
  return r;
}

json sample_fields(const ResourceSample& s) {
  return json{{"rss_bytes", s.rss_bytes}, {"threads", s.threads}, {"fds", s.fds}};
}

json growth_json(const Growth& g, uint64_t calls) {
  return json{{"change", g.change},
              {"rank", g.rank},
              {"per_call", calls ? static_cast<double>(g.change) / static_cast<double>(calls) : 0.0}};
}

Status read_growth(const json& j, const char* name, Growth& g) {
  auto o = object_field(j, name);
  if (!o.is_ok()) return o.status();
  const json& v = *o.value();
  if (!v.contains("change") || !v["change"].is_number_integer())
    return usage_error(std::string("field '") + name + ".change': expected an integer");
  g.change = v["change"].get<int64_t>();
  return read_field(v, "rank", g.rank).with_context(std::string(name) + ": ");
}

Status read_sample_fields(const json& j, const char* name, ResourceSample& s) {
  auto o = object_field(j, name);
  if (!o.is_ok()) return o.status();
  for (auto [field, member] : {std::pair{"rss_bytes", &ResourceSample::rss_bytes},
                               {"threads", &ResourceSample::threads}, {"fds", &ResourceSample::fds}})
    OMNIB_RETURN_IF_ERROR(read_field(*o.value(), field, s.*member).with_context(std::string(name) + ": "));
  return Status::ok();
}

Result<RoleResources> role_from_json(const std::string& role, const json& j) {
  RoleResources r;
  r.role = role;
  OMNIB_RETURN_IF_ERROR(read_field(j, "processes", r.processes));
  OMNIB_RETURN_IF_ERROR(read_field(j, "peak_rss_bytes", r.peak_rss_bytes));
  OMNIB_RETURN_IF_ERROR(read_sample_fields(j, "start", r.start));
  OMNIB_RETURN_IF_ERROR(read_sample_fields(j, "end", r.end));
  r.end.peak_rss_bytes = r.peak_rss_bytes;
  auto growth = object_field(j, "growth");
  if (!growth.is_ok()) return growth.status();
  OMNIB_RETURN_IF_ERROR(read_growth(*growth.value(), "rss_bytes", r.rss_bytes));
  OMNIB_RETURN_IF_ERROR(read_growth(*growth.value(), "threads", r.threads));
  OMNIB_RETURN_IF_ERROR(read_growth(*growth.value(), "fds", r.fds));
  return r;
}

}  // namespace

ResourcesReport summarize_resources(const std::vector<SizeResources>& sizes, std::string note) {
  ResourcesReport out;
  out.note = std::move(note);
  out.verdict = judge_run(sizes);
  if (sizes.empty()) return out;
  const std::vector<ProcessResources>& processes = sizes.back().processes;
  const ProcessResources* reference = nullptr;
  for (const auto& p : processes)
    if (p.role == kWorkerRole && (!reference || p.rank == 0)) reference = &p;
  if (reference) {
    out.calls = reference->calls;
    out.seconds = reference->seconds;
  }
  for (const char* role : kRoles) {
    std::vector<const ProcessResources*> mine;
    for (const auto& p : processes)
      if (p.role == role) mine.push_back(&p);
    if (!mine.empty()) out.roles.push_back(summarize_role(role, mine));
  }
  return out;
}

std::string resources_footer(const ResourcesReport& report) {
  const bool grew = report.verdict.verdict == ResourceVerdict::kGrew;
  return "# resources: " + verdict_line(report.verdict) + (grew || report.note.empty() ? "" : "; " + report.note);
}

json to_json(const ResourcesReport& report) {
  json roles = json::object();
  for (const auto& r : report.roles)
    roles[r.role] = {{"processes", r.processes},
                     {"peak_rss_bytes", r.peak_rss_bytes},
                     {"start", sample_fields(r.start)},
                     {"end", sample_fields(r.end)},
                     {"growth",
                      {{"rss_bytes", growth_json(r.rss_bytes, report.calls)},
                       {"threads", growth_json(r.threads, report.calls)},
                       {"fds", growth_json(r.fds, report.calls)}}}};
  // "flat" keeps its meaning for older readers: nothing was found to grow
  // (the verdict says whether the run was long enough to judge).
  json j{{"calls", report.calls},
         {"seconds", report.seconds},
         {"rss_allowance_bytes", kRssGrowthAllowance},
         {"flat", report.verdict.verdict != ResourceVerdict::kGrew},
         {"grew", report.verdict.grew},
         {"roles", roles}};
  if (!report.note.empty()) j["note"] = report.note;
  add_verdict_json(report.verdict, j);
  return j;
}

Result<ResourcesReport> resources_from_json(const json& j) {
  if (!j.is_object()) return usage_error("field 'resources': expected an object");
  ResourcesReport r;
  OMNIB_RETURN_IF_ERROR(read_field(j, "calls", r.calls).with_context("resources: "));
  OMNIB_RETURN_IF_ERROR(read_field(j, "seconds", r.seconds).with_context("resources: "));
  OMNIB_RETURN_IF_ERROR(read_optional_field(j, "note", r.note).with_context("resources: "));
  auto roles = object_field(j, "roles");
  if (!roles.is_ok()) return roles.status().with_context("resources: ");
  for (const char* role : kRoles) {
    if (!roles.value()->contains(role)) continue;
    auto one = role_from_json(role, (*roles.value())[role]);
    if (!one.is_ok()) return one.status().with_context(std::string("resources: roles: ") + role + ": ");
    r.roles.push_back(one.take());
  }
  auto verdict = verdict_from_json(j);
  if (!verdict.is_ok()) return verdict.status().with_context("resources: ");
  if (verdict.value()) {
    r.verdict = std::move(*verdict.value());
    return r;
  }
  // An older file: its own judgement, end minus start within an allowance.
  bool flat = false;
  OMNIB_RETURN_IF_ERROR(read_field(j, "flat", flat).with_context("resources: "));
  r.verdict.verdict = flat ? ResourceVerdict::kFlat : ResourceVerdict::kGrew;
  for (const auto& g : j.contains("grew") && j["grew"].is_array() ? j["grew"] : json::array())
    if (g.is_string()) r.verdict.grew.push_back(g.get<std::string>());
  return r;
}

}  // namespace omnib
