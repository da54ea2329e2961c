#include "tools/record/result_record.h"

#include <algorithm>

#include "engine/collective/collective.h"
#include "tools/common/json_fields.h"
#include "tools/record/time_tally.h"

namespace omnib {

using nlohmann::json;

namespace {

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json stats_json(const TimeStats& s) {
  return json{{"median", s.median}, {"p95", s.p95},   {"p99", s.p99},     {"min", s.min},
              {"max", s.max},       {"mean", s.mean}, {"stdev", s.stdev}, {"cv", s.cv()}};
}

// The median is required; the other statistics are read when present.
Status read_stats(const json& j, TimeStats& s) {
  OMNIB_RETURN_IF_ERROR(read_field(j, "median", s.median).with_context("time_us: "));
  for (auto [name, field] : {std::pair{"p95", &s.p95}, {"p99", &s.p99}, {"min", &s.min}, {"max", &s.max},
                             {"mean", &s.mean}, {"stdev", &s.stdev}})
    OMNIB_RETURN_IF_ERROR(read_optional_field(j, name, *field).with_context("time_us: "));
  return Status::ok();
}

json inputs_json(const InputStats& in) {
  return json{{"element", in.element_density},
              {"block", in.block_density},
              {"block_mean", in.mean_block_density},
              {"union_block", in.union_block_density},
              {"union_element", in.union_element_density}};
}

Status read_inputs(const json& j, InputStats& in) {
  for (auto [name, field] : {std::pair{"element", &in.element_density}, {"block", &in.block_density},
                             {"block_mean", &in.mean_block_density}, {"union_block", &in.union_block_density},
                             {"union_element", &in.union_element_density}})
    OMNIB_RETURN_IF_ERROR(read_field(j, name, *field).with_context("measured_density: "));
  return Status::ok();
}

json runs_json(const std::vector<RunSummary>& runs) {
  json out = json::array();
  for (const auto& r : runs)
    out.push_back({{"median_us", r.median_us},
                   {"cpu_us_per_call", r.cpu_us_per_call},
                   {"cpu_ns_per_wire_byte", optional_number(r.cpu_ns_per_wire_byte)}});
  return out;
}

Status read_runs(const json& j, std::vector<RunSummary>& runs) {
  if (!j.is_array()) return usage_error("field 'runs': expected an array");
  for (const auto& e : j) {
    RunSummary r;
    OMNIB_RETURN_IF_ERROR(read_field(e, "median_us", r.median_us).with_context("runs: "));
    OMNIB_RETURN_IF_ERROR(read_field(e, "cpu_us_per_call", r.cpu_us_per_call).with_context("runs: "));
    OMNIB_RETURN_IF_ERROR(read_nullable(e, "cpu_ns_per_wire_byte", r.cpu_ns_per_wire_byte).with_context("runs: "));
    runs.push_back(r);
  }
  return Status::ok();
}

}  // namespace

std::optional<double> CpuUsage::wait_share_max() const {
  if (wait_share_per_rank.empty()) return std::nullopt;
  return *std::max_element(wait_share_per_rank.begin(), wait_share_per_rank.end());
}

namespace {

json cpu_json(const std::optional<CpuUsage>& c) {
  if (!c) return nullptr;
  return json{{"user_us_per_call", c->user_us_per_call},
              {"sys_us_per_call", c->sys_us_per_call},
              {"rank_max_us_per_call", c->rank_max_us_per_call},
              {"ns_per_wire_byte", optional_number(c->ns_per_wire_byte)},
              {"wait_share_max", optional_number(c->wait_share_max())},
              {"wait_share_per_rank", c->wait_share_per_rank},
              {"preemptions_per_call_max", optional_number(c->preemptions_per_call_max)},
              {"transport_us_per_call", optional_number(c->transport_us_per_call)},
              {"transport_ns_per_wire_byte", optional_number(c->transport_ns_per_wire_byte)}};
}

Status read_cpu(const json& j, std::optional<CpuUsage>& out) {
  if (!j.contains("cpu") || j["cpu"].is_null()) return Status::ok();
  const json& c = j["cpu"];
  CpuUsage u;
  OMNIB_RETURN_IF_ERROR(read_field(c, "user_us_per_call", u.user_us_per_call).with_context("cpu: "));
  OMNIB_RETURN_IF_ERROR(read_field(c, "sys_us_per_call", u.sys_us_per_call).with_context("cpu: "));
  OMNIB_RETURN_IF_ERROR(read_field(c, "rank_max_us_per_call", u.rank_max_us_per_call).with_context("cpu: "));
  OMNIB_RETURN_IF_ERROR(read_nullable(c, "ns_per_wire_byte", u.ns_per_wire_byte).with_context("cpu: "));
  // Files before the CPU wait was measured have none.
  if (c.contains("wait_share_per_rank"))
    OMNIB_RETURN_IF_ERROR(read_field(c, "wait_share_per_rank", u.wait_share_per_rank).with_context("cpu: "));
  if (c.contains("preemptions_per_call_max"))
    OMNIB_RETURN_IF_ERROR(
        read_nullable(c, "preemptions_per_call_max", u.preemptions_per_call_max).with_context("cpu: "));
  // Files before the transport's CPU was accounted have none.
  for (const auto& [field, value] : {std::pair{"transport_us_per_call", &u.transport_us_per_call},
                                     std::pair{"transport_ns_per_wire_byte", &u.transport_ns_per_wire_byte}})
    if (c.contains(field)) OMNIB_RETURN_IF_ERROR(read_nullable(c, field, *value).with_context("cpu: "));
  out = u;
  return Status::ok();
}

json link_limit_json(const std::optional<LinkLimit>& l) {
  if (!l) return nullptr;
  return json{{"limit_us", l->limit_us}, {"of_limit", l->of_limit}};
}

Status read_link_limit(const json& j, std::optional<LinkLimit>& out) {
  if (!j.contains("link_limit") || j["link_limit"].is_null()) return Status::ok();
  LinkLimit l;
  OMNIB_RETURN_IF_ERROR(read_field(j["link_limit"], "limit_us", l.limit_us).with_context("link_limit: "));
  OMNIB_RETURN_IF_ERROR(read_field(j["link_limit"], "of_limit", l.of_limit).with_context("link_limit: "));
  out = l;
  return Status::ok();
}

// Files of builds before the memory floor, and runs without --profile, have
// neither field.
Status read_memory_floor(const json& j, ResultRecord& r) {
  if (j.contains("memory_floor") && !j["memory_floor"].is_null()) {
    auto f = memory_floor_from_json(j["memory_floor"]);
    if (!f.is_ok()) return f.status().with_context("memory_floor: ");
    r.memory_floor = f.take();
  }
  return read_nullable(j, "of_bound", r.of_bound);
}

json profile_json(const std::optional<ProfileSummary>& p) {
  if (!p) return nullptr;
  json shares = json::object();
  for (const auto& [name, field] : profile_shares()) shares[name] = (*p).*field;
  return json{{"calls", p->calls},
              {"call_us", p->call_us},
              {"barrier_us", p->barrier_us},
              {"shares", shares},
              {"slowest_rank", p->slowest_rank},
              {"dropped_events", p->dropped_events}};
}

Status read_profile(const json& j, std::optional<ProfileSummary>& out) {
  if (!j.contains("profile") || j["profile"].is_null()) return Status::ok();
  const json& p = j["profile"];
  ProfileSummary s;
  OMNIB_RETURN_IF_ERROR(read_field(p, "calls", s.calls).with_context("profile: "));
  OMNIB_RETURN_IF_ERROR(read_field(p, "call_us", s.call_us).with_context("profile: "));
  OMNIB_RETURN_IF_ERROR(read_field(p, "barrier_us", s.barrier_us).with_context("profile: "));
  OMNIB_RETURN_IF_ERROR(read_field(p, "slowest_rank", s.slowest_rank).with_context("profile: "));
  OMNIB_RETURN_IF_ERROR(read_field(p, "dropped_events", s.dropped_events).with_context("profile: "));
  auto shares = object_field(p, "shares");
  if (!shares.is_ok()) return shares.status().with_context("profile: ");
  for (const auto& [name, field] : profile_shares())
    OMNIB_RETURN_IF_ERROR(read_field(*shares.value(), name, s.*field).with_context("profile: shares: "));
  out = s;
  return Status::ok();
}

json duration_json(const DurationOutcome& d) {
  return json{{"requested_s", d.requested_s},
              {"elapsed_s", d.elapsed_s},
              {"timed_calls", d.timed_calls},
              {"complete", d.complete},
              {"percentiles_exact", d.percentiles_exact},
              {"percentile_error", d.percentiles_exact ? 0.0 : TimeTally::kPercentileError}};
}

Status read_duration(const json& j, std::optional<DurationOutcome>& out) {
  if (!j.contains("duration") || j["duration"].is_null()) return Status::ok();
  auto o = object_field(j, "duration");
  if (!o.is_ok()) return o.status();
  const json& v = *o.value();
  DurationOutcome d;
  OMNIB_RETURN_IF_ERROR(read_field(v, "requested_s", d.requested_s).with_context("duration: "));
  OMNIB_RETURN_IF_ERROR(read_field(v, "elapsed_s", d.elapsed_s).with_context("duration: "));
  OMNIB_RETURN_IF_ERROR(read_field(v, "timed_calls", d.timed_calls).with_context("duration: "));
  OMNIB_RETURN_IF_ERROR(read_field(v, "complete", d.complete).with_context("duration: "));
  OMNIB_RETURN_IF_ERROR(read_field(v, "percentiles_exact", d.percentiles_exact).with_context("duration: "));
  out = d;
  return Status::ok();
}

Status read_speedups(const json& j, std::map<std::string, double>& out) {
  if (!j.contains("speedup_vs")) return Status::ok();
  const json& s = j["speedup_vs"];
  if (!s.is_object()) return usage_error("field 'speedup_vs': expected an object");
  for (const auto& [name, value] : s.items()) {
    double v = 0;
    OMNIB_RETURN_IF_ERROR(read_field(s, name.c_str(), v).with_context("speedup_vs: "));
    out[name] = v;
  }
  return Status::ok();
}

json best_dense_json(const std::optional<BestDense>& b) {
  if (!b) return nullptr;
  return json{{"algo", b->algo}, {"speedup", b->speedup}};
}

Status read_best_dense(const json& j, std::optional<BestDense>& out) {
  if (!j.contains("vs_best_dense") || j["vs_best_dense"].is_null()) return Status::ok();
  auto b = object_field(j, "vs_best_dense");
  if (!b.is_ok()) return b.status();
  BestDense d;
  OMNIB_RETURN_IF_ERROR(read_field(*b.value(), "algo", d.algo).with_context("vs_best_dense: "));
  OMNIB_RETURN_IF_ERROR(read_field(*b.value(), "speedup", d.speedup).with_context("vs_best_dense: "));
  out = d;
  return Status::ok();
}

// Records written before "dense" existed: what this build's registry says.
Status read_dense(const json& j, ResultRecord& r, std::vector<std::string>* defaulted) {
  bool present = false;
  OMNIB_RETURN_IF_ERROR(read_optional_field(j, "dense", r.dense, &present));
  if (present) return Status::ok();
  const CollectiveInfo* info = CollectiveRegistry::instance().find(r.algo);
  r.dense = info != nullptr && !info->exploits_sparsity;
  defaulted->push_back("dense");
  return Status::ok();
}

Status read_wire(const json& j, int schema_version, ResultRecord& r, std::vector<std::string>* defaulted) {
  auto wire = object_field(j, "wire_bytes");
  if (!wire.is_ok()) return wire.status();
  const json& w = *wire.value();
  OMNIB_RETURN_IF_ERROR(read_nullable(w, "sent_per_rank_max", r.wire_sent_per_rank_max).with_context("wire_bytes: "));
  OMNIB_RETURN_IF_ERROR(read_nullable(w, "sent_total", r.wire_sent_total).with_context("wire_bytes: "));
  OMNIB_RETURN_IF_ERROR(read_optional_field(w, "note", r.wire_note).with_context("wire_bytes: "));
  if (schema_version < 2) {
    defaulted->push_back("wire_bytes.frames_per_rank_max");
    return Status::ok();
  }
  OMNIB_RETURN_IF_ERROR(
      read_nullable(w, "frames_per_rank_max", r.wire_frames_per_rank_max).with_context("wire_bytes: "));
  return read_nullable(w, "frames_total", r.wire_frames_total).with_context("wire_bytes: ");
}

// The outcome of a record that ran (skipped records have none).
Status read_outcome(const json& j, int schema_version, ResultRecord& r, std::vector<std::string>* defaulted) {
  OMNIB_RETURN_IF_ERROR(read_field(j, "iters", r.iters));
  auto t = object_field(j, "time_us");
  if (!t.is_ok()) return t.status();
  OMNIB_RETURN_IF_ERROR(read_stats(*t.value(), r.time_us));
  OMNIB_RETURN_IF_ERROR(read_optional_field(j, "samples_us", r.samples_us));
  OMNIB_RETURN_IF_ERROR(read_field(j, "algbw_GBps", r.algbw_GBps));
  OMNIB_RETURN_IF_ERROR(read_field(j, "busbw_GBps", r.busbw_GBps));
  OMNIB_RETURN_IF_ERROR(read_wire(j, schema_version, r, defaulted));
  if (j.contains("link_bytes") && !j["link_bytes"].is_null()) {
    OMNIB_RETURN_IF_ERROR(read_nullable(j["link_bytes"], "sent_per_rank_max", r.link_sent_per_rank_max));
    OMNIB_RETURN_IF_ERROR(read_nullable(j["link_bytes"], "sent_total", r.link_sent_total));
    if (j["link_bytes"].contains("retransmits_per_call"))
      OMNIB_RETURN_IF_ERROR(read_nullable(j["link_bytes"], "retransmits_per_call", r.link_retransmits_per_call));
  }
  OMNIB_RETURN_IF_ERROR(read_field(j, "checked", r.checked));
  OMNIB_RETURN_IF_ERROR(read_field(j, "wrong_elements", r.wrong_elements));
  OMNIB_RETURN_IF_ERROR(read_speedups(j, r.speedup_vs));
  if (j.contains("routes")) OMNIB_RETURN_IF_ERROR(read_field(j, "routes", r.routes));
  OMNIB_RETURN_IF_ERROR(read_best_dense(j, r.vs_best_dense));
  if (schema_version < 2) {
    // Schema 1 said "correct": true for unchecked runs; an unchecked run is
    // never evidence of correctness.
    bool correct = false;
    OMNIB_RETURN_IF_ERROR(read_field(j, "correct", correct));
    if (r.checked) r.correct = correct;
    r.runs = {RunSummary{r.time_us.median, 0, std::nullopt}};
    defaulted->insert(defaulted->end(), {"warmup", "repeat", "runs", "wrong_calls", "calls_checked", "cpu"});
    return Status::ok();
  }
  OMNIB_RETURN_IF_ERROR(read_field(j, "warmup", r.warmup));
  OMNIB_RETURN_IF_ERROR(read_field(j, "repeat", r.repeat));
  OMNIB_RETURN_IF_ERROR(read_runs(j.contains("runs") ? j["runs"] : json(), r.runs));
  if (!j.contains("correct")) return usage_error("field 'correct' is missing");
  if (!j["correct"].is_null()) {
    bool correct = false;
    OMNIB_RETURN_IF_ERROR(read_field(j, "correct", correct));
    r.correct = correct;
  }
  if (r.correct && !r.checked) return usage_error("field 'correct': set although the run was not checked");
  OMNIB_RETURN_IF_ERROR(read_field(j, "wrong_calls", r.wrong_calls));
  OMNIB_RETURN_IF_ERROR(read_field(j, "calls_checked", r.calls_checked));
  uint64_t first = 0;
  bool has_first = false;
  OMNIB_RETURN_IF_ERROR(read_optional_field(j, "first_wrong_call", first, &has_first));
  if (has_first) r.first_wrong_call = first;
  OMNIB_RETURN_IF_ERROR(read_nullable(j, "setup_us", r.setup_us));
  OMNIB_RETURN_IF_ERROR(read_link_limit(j, r.link_limit));
  OMNIB_RETURN_IF_ERROR(read_memory_floor(j, r));
  OMNIB_RETURN_IF_ERROR(read_profile(j, r.profile));
  OMNIB_RETURN_IF_ERROR(read_duration(j, r.duration));
  return read_cpu(j, r.cpu);
}

}  // namespace

std::vector<std::pair<const char*, double ProfileSummary::*>> profile_shares() {
  return {{"compute", &ProfileSummary::compute}, {"send", &ProfileSummary::send},
          {"wait", &ProfileSummary::wait},       {"barrier", &ProfileSummary::barrier},
          {"backend", &ProfileSummary::backend}, {"other", &ProfileSummary::other}};
}

json to_json(const ResultRecord& r) {
  json j;
  j["algo"] = r.algo;
  j["config"] = r.config.key();
  j["count"] = r.config.count();
  j["dense"] = r.dense;
  j["skipped"] = r.skipped;
  if (r.skipped) j["skip_reason"] = r.skip_reason;
  if (r.simulated) j["simulated"] = true;
  j["analytic_bytes"] = {{"sent_per_rank_max", r.analytic_sent_per_rank_max},
                         {"sent_total", r.analytic_sent_total},
                         {"exact", r.analytic_exact}};
  j["measured_density"] = inputs_json(r.inputs);
  if (r.skipped) return j;
  j["iters"] = r.iters;
  j["warmup"] = r.warmup;
  j["repeat"] = r.repeat;
  j["time_us"] = stats_json(r.time_us);
  j["samples_us"] = r.samples_us;
  j["runs"] = runs_json(r.runs);
  j["algbw_GBps"] = r.algbw_GBps;
  j["busbw_GBps"] = r.busbw_GBps;
  j["busbw_convention"] = "dense: algbw*2(n-1)/n";
  j["wire_bytes"] = {{"sent_per_rank_max", optional_number(r.wire_sent_per_rank_max)},
                     {"sent_total", optional_number(r.wire_sent_total)},
                     {"frames_per_rank_max", optional_number(r.wire_frames_per_rank_max)},
                     {"frames_total", optional_number(r.wire_frames_total)}};
  if (!r.wire_note.empty()) j["wire_bytes"]["note"] = r.wire_note;
  if (r.link_sent_per_rank_max)
    j["link_bytes"] = {{"sent_per_rank_max", *r.link_sent_per_rank_max},
                       {"sent_total", optional_number(r.link_sent_total)},
                       {"retransmits_per_call", optional_number(r.link_retransmits_per_call)}};
  j["checked"] = r.checked;
  j["correct"] = r.correct ? json(*r.correct) : json(nullptr);
  j["wrong_elements"] = r.wrong_elements;
  j["wrong_calls"] = r.wrong_calls;
  j["calls_checked"] = r.calls_checked;
  if (r.first_wrong_call) j["first_wrong_call"] = *r.first_wrong_call;
  j["cpu"] = cpu_json(r.cpu);
  if (r.setup_us) j["setup_us"] = *r.setup_us;
  if (r.link_limit) j["link_limit"] = link_limit_json(r.link_limit);
  if (r.memory_floor) j["memory_floor"] = memory_floor_json(*r.memory_floor);
  if (r.of_bound) j["of_bound"] = *r.of_bound;
  if (r.profile) j["profile"] = profile_json(r.profile);
  if (r.duration) j["duration"] = duration_json(*r.duration);
  j["speedup_vs"] = r.speedup_vs;
  if (!r.routes.empty()) j["routes"] = r.routes;
  j["vs_best_dense"] = best_dense_json(r.vs_best_dense);
  if (!r.note.empty()) j["note"] = r.note;
  return j;
}

Result<ResultRecord> record_from_json(const json& j, int schema_version, std::vector<std::string>* defaulted) {
  if (!j.is_object()) return usage_error("a result record must be a JSON object");
  std::vector<std::string> ignored;
  if (!defaulted) defaulted = &ignored;
  ResultRecord r;
  OMNIB_RETURN_IF_ERROR(read_field(j, "algo", r.algo));
  const json* config = &j;
  if (schema_version >= 2) {
    auto c = object_field(j, "config");
    if (!c.is_ok()) return c.status();
    config = c.value();
  }
  auto cfg = run_config_from_json(*config, schema_version, defaulted);
  if (!cfg.is_ok()) return cfg.status().with_context(schema_version >= 2 ? "config: " : "");
  r.config = cfg.take();
  OMNIB_RETURN_IF_ERROR(read_dense(j, r, defaulted));
  OMNIB_RETURN_IF_ERROR(read_field(j, "skipped", r.skipped));
  OMNIB_RETURN_IF_ERROR(read_optional_field(j, "skip_reason", r.skip_reason));
  if (j.contains("analytic_bytes")) {
    OMNIB_RETURN_IF_ERROR(read_field(j["analytic_bytes"], "sent_per_rank_max", r.analytic_sent_per_rank_max)
                              .with_context("analytic_bytes: "));
    OMNIB_RETURN_IF_ERROR(
        read_field(j["analytic_bytes"], "sent_total", r.analytic_sent_total).with_context("analytic_bytes: "));
    OMNIB_RETURN_IF_ERROR(
        read_optional_field(j["analytic_bytes"], "exact", r.analytic_exact).with_context("analytic_bytes: "));
  }
  if (j.contains("measured_density")) OMNIB_RETURN_IF_ERROR(read_inputs(j["measured_density"], r.inputs));
  OMNIB_RETURN_IF_ERROR(read_optional_field(j, "note", r.note));
  OMNIB_RETURN_IF_ERROR(read_optional_field(j, "simulated", r.simulated));
  if (r.skipped) return r;
  OMNIB_RETURN_IF_ERROR(read_outcome(j, schema_version, r, defaulted));
  return r;
}
}  // namespace omnib
