// Result records (tools/record/result_record.h): the --profile and link
// limit fields of schema 3, the set-up time and the --duration block
// round-trip, older schemas still load, and docs/json-schema.md describes the
// schema the code writes.
#include "tools/record/result_record.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>

#include "tools/record/time_tally.h"

namespace omnib {
namespace {

using nlohmann::json;

ResultRecord full_record() {
  ResultRecord r;
  r.algo = "omni";
  r.config.size_bytes = 4096;
  r.iters = 2;
  r.repeat = 1;
  r.time_us.median = 10;
  r.samples_us = {10, 11};
  r.runs = {RunSummary{10, 5, 0.5}};
  r.wire_sent_per_rank_max = 100;
  r.wire_sent_total = 300;
  r.wire_frames_per_rank_max = 2;
  r.wire_frames_total = 6;
  r.wire_note = "counted";
  r.link_sent_per_rank_max = 120;
  r.link_sent_total = 360;
  r.checked = true;
  r.correct = false;
  r.wrong_elements = 3;
  r.wrong_calls = 1;
  r.calls_checked = 3;
  r.first_wrong_call = 1;
  r.cpu = CpuUsage{1, 2, 3, 4.5};
  r.setup_us = 1234.5;
  r.link_limit = LinkLimit{7.5, 0.75};
  r.memory_floor = MemoryFloor{6.5, kFloorMeasured, "host-a", "AMD EPYC", 4, 1, 2, 4096, 4, false, 9, "/tmp/floor.json"};
  r.of_bound = 0.75;
  ProfileSummary p;
  p.calls = 2;
  p.call_us = 10;
  p.barrier_us = 1;
  p.compute = 0.1;
  p.send = 0.2;
  p.wait = 0.3;
  p.barrier = 0.1;
  p.backend = 0.05;
  p.other = 0.25;
  p.slowest_rank = 2;
  p.dropped_events = 9;
  r.profile = p;
  r.duration = DurationOutcome{60, 60.4, 123456, false, false};
  r.speedup_vs = {{"ring", 2.0}};
  r.note = "a note";
  r.routes = {{"shards", 1}, {"direct", 4}};
  return r;
}

TEST(ResultRecord, ProfileLinkLimitAndSetupTimeRoundTrip) {
  const ResultRecord r = full_record();
  std::vector<std::string> defaulted;
  auto back = record_from_json(to_json(r), kSchemaVersion, &defaulted);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_TRUE(defaulted.empty());
  EXPECT_EQ(back.value().setup_us, r.setup_us);
  EXPECT_EQ(back.value().routes, r.routes);
  ASSERT_TRUE(back.value().link_limit);
  EXPECT_DOUBLE_EQ(back.value().link_limit->limit_us, 7.5);
  EXPECT_DOUBLE_EQ(back.value().link_limit->of_limit, 0.75);
  ASSERT_TRUE(back.value().profile);
  const ProfileSummary& p = *back.value().profile;
  EXPECT_EQ(p.calls, 2u);
  EXPECT_EQ(p.slowest_rank, 2);
  EXPECT_EQ(p.dropped_events, 9u);
  for (const auto& [name, field] : profile_shares()) EXPECT_DOUBLE_EQ(p.*field, r.profile.value().*field) << name;
  // A mistyped share names itself.
  json j = to_json(r);
  j["profile"]["shares"]["wait"] = "most";
  auto bad = record_from_json(j, kSchemaVersion, nullptr);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("'wait'"), std::string::npos) << bad.status().message();
}

// The memory floor and its bound round-trip; files without them (older
// builds, runs without --profile) load without them, and a floor of an
// unknown source names the field.
TEST(ResultRecord, MemoryFloorRoundTripsAndOlderFilesLackIt) {
  const ResultRecord r = full_record();
  auto back = record_from_json(to_json(r), kSchemaVersion, nullptr);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  ASSERT_TRUE(back.value().memory_floor);
  const MemoryFloor& f = *back.value().memory_floor;
  EXPECT_DOUBLE_EQ(f.floor_us, 6.5);
  EXPECT_EQ(f.source, kFloorMeasured);
  EXPECT_EQ(f.host, "host-a");
  EXPECT_EQ(f.cpu_model, "AMD EPYC");
  EXPECT_EQ(f.ranks, 4);
  EXPECT_EQ(f.threads_per_rank, 1);
  EXPECT_EQ(f.cpus, 2);
  EXPECT_EQ(f.size_bytes, 4096u);
  EXPECT_EQ(f.dtype_bytes, 4);
  EXPECT_FALSE(f.writes_output);
  EXPECT_EQ(f.repetitions, 9);
  EXPECT_EQ(f.cache_file, "/tmp/floor.json");
  EXPECT_EQ(back.value().of_bound, 0.75);

  json old = to_json(r);
  old.erase("memory_floor");
  old.erase("of_bound");
  for (int version : {3, kSchemaVersion}) {
    auto without = record_from_json(old, version, nullptr);
    ASSERT_TRUE(without.is_ok()) << without.status().message();
    EXPECT_FALSE(without.value().memory_floor);
    EXPECT_FALSE(without.value().of_bound);
  }
  json bad = to_json(r);
  bad["memory_floor"]["source"] = "guessed";
  const std::string message = record_from_json(bad, kSchemaVersion, nullptr).status().message();
  EXPECT_NE(message.find("memory_floor: field 'source'"), std::string::npos) << message;
}

TEST(ResultRecord, DurationRoundTrips) {
  const json j = to_json(full_record());
  EXPECT_EQ(j["duration"]["percentile_error"], TimeTally::kPercentileError);
  auto back = record_from_json(j, kSchemaVersion, nullptr);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  ASSERT_TRUE(back.value().duration);
  const DurationOutcome& d = *back.value().duration;
  EXPECT_EQ(d.timed_calls, 123456u);
  EXPECT_DOUBLE_EQ(d.elapsed_s, 60.4);
  EXPECT_FALSE(d.complete);
  EXPECT_FALSE(d.percentiles_exact);
  json bad = j;
  bad["duration"]["complete"] = "no";
  EXPECT_NE(record_from_json(bad, kSchemaVersion, nullptr).status().message().find("complete"), std::string::npos);
}

TEST(ResultRecord, SchemaTwoRecordsLoadWithoutProfiles) {
  json j = to_json(full_record());
  j.erase("profile");
  j.erase("link_limit");
  j.erase("setup_us");
  std::vector<std::string> defaulted;
  auto r = record_from_json(j, 2, &defaulted);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_FALSE(r.value().profile);
  EXPECT_FALSE(r.value().link_limit);
  EXPECT_FALSE(r.value().setup_us);
  EXPECT_TRUE(defaulted.empty());
}

std::string schema_doc() {
  std::ifstream doc(std::string(OMNIB_SOURCE_DIR) + "/docs/json-schema.md");
  return std::string(std::istreambuf_iterator<char>(doc), {});
}

TEST(ResultRecord, SchemaDocStatesTheVersionWritten) {
  const std::string doc = schema_doc();
  ASSERT_FALSE(doc.empty()) << "docs/json-schema.md not found";
  const std::string v = std::to_string(kSchemaVersion);
  EXPECT_NE(doc.find("# Result JSON (schema_version " + v + ")"), std::string::npos);
  EXPECT_NE(doc.find("\"schema_version\": " + v + ","), std::string::npos);
}

// Every field a record can hold is in the doc's record table, and every
// field the table's first column names is one the code writes.
TEST(ResultRecord, SchemaDocListsEveryRecordField) {
  std::istringstream doc(schema_doc());
  std::string line;
  bool in_section = false;
  std::set<std::string> named, mentioned;
  static const std::regex kTick("`([a-zA-Z_]+)`");
  while (std::getline(doc, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## A result record";
    if (!in_section || line.rfind("| `", 0) != 0) continue;
    const std::string first = line.substr(0, line.find(" |", 2));
    for (std::sregex_iterator it(first.begin(), first.end(), kTick), end; it != end; ++it) named.insert((*it)[1]);
    for (std::sregex_iterator it(line.begin(), line.end(), kTick), end; it != end; ++it) mentioned.insert((*it)[1]);
  }
  ResultRecord skipped;
  skipped.skipped = true;
  skipped.skip_reason = "no GPU";
  skipped.simulated = true;  // written only by omni-bench simulate
  std::set<std::string> written;
  for (const json& j : {to_json(full_record()), to_json(skipped)})
    for (const auto& [key, value] : j.items()) written.insert(key);
  for (const auto& key : written) EXPECT_EQ(mentioned.count(key), 1u) << key << " is written but not documented";
  for (const auto& key : named) EXPECT_EQ(written.count(key), 1u) << key << " is documented but never written";
}

}  // namespace
}  // namespace omnib

namespace omnib {
namespace {

// A simulated record says so, skipped or not, with its platform in the
// identity; a measured one has no "simulated" and an empty topology, and a
// file of schema 6 (before simulate) loads with topology "".
TEST(ResultRecord, SimulatedRecordsAndTheirPlatformRoundTrip) {
  ResultRecord r = full_record();
  r.simulated = true;
  r.config.net = "simulate";
  r.config.topology = "fat-tree:2;32,32;1,32;1,1";
  auto back = record_from_json(to_json(r), kSchemaVersion, nullptr);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_TRUE(back.value().simulated);
  EXPECT_EQ(back.value().config.topology, r.config.topology);
  EXPECT_EQ(back.value().config.net, "simulate");
  r.skipped = true;
  EXPECT_TRUE(to_json(r)["simulated"].get<bool>());

  const ResultRecord measured = full_record();
  json j = to_json(measured);
  EXPECT_FALSE(j.contains("simulated"));
  j["config"].erase("topology");
  std::vector<std::string> defaulted;
  auto old = record_from_json(j, 6, &defaulted);
  ASSERT_TRUE(old.is_ok()) << old.status().message();
  EXPECT_EQ(old.value().config.topology, "");
  EXPECT_FALSE(old.value().simulated);
  EXPECT_NE(std::find(defaulted.begin(), defaulted.end(), "topology"), defaulted.end());
  EXPECT_FALSE(record_from_json(j, kSchemaVersion, nullptr).is_ok());  // schema 7 must have it
}

}  // namespace
}  // namespace omnib
