// End-to-end: --trace and --profile on the engine and the CPU baselines, run
// as real processes on loopback. The trace is read back with the program's
// own reader and checked by tests/support/trace_checks.h; the --profile figures are
// checked in the table, in the JSON and against `trace summarize`.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/cli_runner.h"
#include "tests/support/trace_checks.h"
#include "tools/net/net_requirements.h"
#include "tools/record/result_record.h"
#include "tools/trace/trace_file.h"

namespace omnib {
namespace {

using nlohmann::json;
using testing::read_json;
using testing::run_cli;
using testing::temp_path;

struct TracedRun {
  testing::CliResult cli;
  json results;
  TraceDocument trace;
  std::string trace_path;
};

// `allreduce --profile --trace FILE -J FILE -w 1 -T 30` plus `args`; the run
// must succeed and its trace must read back.
TracedRun run_traced(const std::vector<std::string>& args, int limit_seconds = 240,
                     const std::vector<std::string>& env = {}) {
  TracedRun run;
  const std::string results = temp_path("traced.json");
  run.trace_path = temp_path("traced.trace.json");
  std::vector<std::string> full{"allreduce", "-w", "1", "-T", "30", "-J", results, "--profile", "--trace", run.trace_path};
  full.insert(full.end(), args.begin(), args.end());
  run.cli = run_cli(full, env, limit_seconds);
  EXPECT_EQ(run.cli.exit_code, 0) << run.cli.out << run.cli.err;
  if (run.cli.exit_code != 0) return run;
  run.results = read_json(results);
  auto doc = read_trace_file(run.trace_path);
  EXPECT_TRUE(doc.is_ok()) << doc.status().message();
  if (doc.is_ok()) run.trace = doc.take();
  return run;
}

std::string lines(const std::vector<std::string>& problems) {
  std::string out;
  for (size_t i = 0; i < problems.size() && i < 10; ++i) out += "\n  " + problems[i];
  if (problems.size() > 10) out += "\n  ... " + std::to_string(problems.size() - 10) + " more";
  return out;
}

// The percentages of each row of a --profile block, by algorithm.
std::map<std::string, std::vector<double>> profile_block_shares(const std::string& out) {
  std::map<std::string, std::vector<double>> rows;
  std::istringstream in(out);
  std::string line;
  static const std::regex kRow(R"(^#\s+\d+ (\S+)\s+\d+\s+[\d.]+((?:\s+[\d.]+%){6}).*)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, kRow)) continue;
    std::istringstream shares(m[2].str());
    std::string share;
    while (shares >> share) rows[m[1].str()].push_back(std::stod(share));
  }
  return rows;
}

// Algorithms whose slowest rank waited for a CPU past the share at which a
// result is flagged HOST-BOUND: on such a run no trace can explain the call.
std::set<std::string> host_bound_algos(const nlohmann::json& results) {
  std::set<std::string> bound;
  for (const auto& r : results["results"]) {
    const auto cpu = r.find("cpu");
    if (cpu == r.end() || !cpu->is_object()) continue;
    const auto share = cpu->find("wait_share_max");
    if (share != cpu->end() && share->is_number() && share->get<double>() > kHostBoundWaitShare)
      bound.insert(r["algo"].get<std::string>());
  }
  return bound;
}

// The checks every traced run must pass.
void expect_valid_trace(const TracedRun& run, uint64_t traced_calls) {
  const auto nesting = testing::check_nesting(run.trace);
  EXPECT_TRUE(nesting.empty()) << lines(nesting);
  const auto times = testing::check_call_times(run.trace, run.results, 0.05);
  EXPECT_TRUE(times.empty()) << lines(times);
  // One call in four may have had a lane stalled by a loaded machine; an
  // algorithm whose run says the host set its time (CPU wait) is excused.
  const auto paths = testing::check_critical_paths(run.trace, 0.2, 0.25, host_bound_algos(run.results));
  EXPECT_TRUE(paths.empty()) << lines(paths);
  const auto balance = testing::check_bytes_balance(run.trace);
  EXPECT_TRUE(balance.empty()) << lines(balance);

  std::set<std::string> ran;
  for (const auto& r : run.results["results"])
    if (!r.value("skipped", false)) ran.insert(r["algo"].get<std::string>());
  for (const RankTrace& rank : run.trace.ranks) {
    // Ranks of one host share CLOCK_MONOTONIC: the estimate must find that.
    EXPECT_LE(std::abs(rank.clock.offset_ns), rank.clock.error_ns) << "rank " << rank.rank;
    EXPECT_GT(rank.clock.rounds, 0);
    // The harness's thread and at least one lane, by name.
    EXPECT_GE(rank.thread_names.size(), 2u) << "rank " << rank.rank;
    bool harness = false;
    for (const auto& [tid, name] : rank.thread_names) harness |= name == "harness";
    EXPECT_TRUE(harness) << "rank " << rank.rank;
    std::map<std::string, std::set<uint64_t>> calls;
    for (const auto& c : rank.calls) calls[c.algo].insert(c.iteration);
    for (const auto& algo : ran) EXPECT_EQ(calls[algo].size(), traced_calls) << algo << " on rank " << rank.rank;
  }
  // The JSON's shares add up, and so do the printed ones.
  const auto printed = profile_block_shares(run.cli.out);
  for (const auto& r : run.results["results"]) {
    if (r.value("skipped", false)) continue;
    const std::string algo = r["algo"];
    ASSERT_TRUE(r.contains("profile")) << algo;
    double sum = 0;
    for (const auto& [name, share] : r["profile"]["shares"].items()) sum += share.get<double>();
    EXPECT_NEAR(sum, 1.0, 1e-9) << algo;
    EXPECT_EQ(r["profile"]["calls"].get<uint64_t>(), traced_calls) << algo;
    ASSERT_EQ(printed.count(algo), 1u) << algo << " has no row in the profile block:\n" << run.cli.out;
    double printed_sum = 0;
    for (double s : printed.at(algo)) printed_sum += s;
    EXPECT_NEAR(printed_sum, 100.0, 0.35) << algo;
  }
}

const std::vector<std::string> kTracedAlgos = {"omni", "ps", "ring", "allgather", "sparcml-split", "gloo-ring-chunked"};

std::string algo_list() {
  std::string out;
  for (const auto& a : kTracedAlgos) out += (out.empty() ? "" : ",") + a;
  return out;
}

TEST(TraceEndToEnd, EveryAlgorithmWritesAValidTrace) {
  // The shards route: omni's result stream too (auto would go direct at this overlap).
  auto run = run_traced(
      {"--algo", algo_list(), "--nodes", "4", "-b", "8M", "-e", "8M", "--density", "0.05", "-n", "4", "--route", "shards"});
  ASSERT_EQ(run.cli.exit_code, 0);
  expect_valid_trace(run, 4);
  ASSERT_EQ(run.trace.ranks.size(), 4u);
  for (const RankTrace& rank : run.trace.ranks) EXPECT_TRUE(rank.worker);
  // Every algorithm that ran left its kinds of spans.
  std::map<std::string, std::set<std::string>> names;
  for (const auto& c : run.trace.ranks[1].calls)
    for (const auto& s : c.spans) names[c.algo].insert(s.name);
  for (const char* n : {"scan", "send batch", "recv batch", "wait block", "reduce", "send result", "recv result", "scatter"})
    EXPECT_EQ(names["omni"].count(n), 1u) << n;
  for (const char* n : {"send step", "receive step", "send frame", "recv frame", "reduce", "copy"})
    EXPECT_EQ(names["ring"].count(n), 1u) << n;
  for (const char* n : {"send round", "receive round", "add pairs"}) EXPECT_EQ(names["allgather"].count(n), 1u) << n;
  for (const char* n : {"reduce-scatter send", "allgather receive", "wait result"})
    EXPECT_EQ(names["sparcml-split"].count(n), 1u) << n;
  if (names.count("gloo-ring-chunked")) {
    EXPECT_EQ(names["gloo-ring-chunked"].count("gloo allreduce"), 1u);
  }
  // Perfetto's track names.
  const json raw = read_json(run.trace_path);
  std::set<std::string> processes;
  for (const auto& e : raw["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["args"]["name"].get<std::string>());
  EXPECT_EQ(processes.size(), 4u);
  for (const auto& p : processes) EXPECT_TRUE(std::regex_match(p, std::regex(R"(rank \d \(worker\) .+)"))) << p;
}

TEST(TraceEndToEnd, SummarizeGivesTheRunsBreakdownAndACriticalPath) {
  auto run = run_traced({"--algo", "omni,ring", "--nodes", "3", "-b", "2M", "-e", "2M", "--density", "0.1", "-n", "3"});
  ASSERT_EQ(run.cli.exit_code, 0);
  auto summary = run_cli({"trace", "summarize", run.trace_path});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  const auto from_trace = profile_block_shares(summary.out);
  const auto from_run = profile_block_shares(run.cli.out);
  for (const char* algo : {"omni", "ring"}) {
    ASSERT_EQ(from_trace.count(algo), 1u) << summary.out;
    ASSERT_EQ(from_trace.at(algo).size(), from_run.at(algo).size());
    for (size_t i = 0; i < from_run.at(algo).size(); ++i)
      EXPECT_NEAR(from_trace.at(algo)[i], from_run.at(algo)[i], 0.15) << algo << " share " << i << "\n" << summary.out;
    EXPECT_NE(summary.out.find(std::string("# critical path of ") + algo), std::string::npos) << summary.out;
  }
  auto one_call = run_cli({"trace", "summarize", run.trace_path, "--iter", "2"});
  EXPECT_EQ(one_call.exit_code, 0) << one_call.err;
  EXPECT_NE(one_call.out.find("bytes, call 2:"), std::string::npos) << one_call.out;
  auto missing_call = run_cli({"trace", "summarize", run.trace_path, "--iter", "7"});
  EXPECT_EQ(missing_call.exit_code, 2);
  EXPECT_NE(missing_call.err.find("no traced call 7"), std::string::npos) << missing_call.err;
}

TEST(TraceEndToEnd, TheDirectRoutePacksEachBatchOnceForAllPeers) {
  // Scattered non-zeros go out as offsets: packed once per batch, then
  // posted to every rank (the direct route's destinations, itself included).
  const int nodes = 4;
  auto run = run_traced({"--algo", "omni", "--route", "direct", "--nodes", std::to_string(nodes), "-b", "4M", "-e",
                         "4M", "--workload", "scattered", "--density", "0.01", "-n", "2"});
  ASSERT_EQ(run.cli.exit_code, 0);
  for (const RankTrace& rank : run.trace.ranks) {
    for (const auto& c : rank.calls) {
      size_t packs = 0, sends = 0;
      for (const auto& sp : c.spans) {
        packs += sp.name == "pack";
        sends += sp.name == "send batch";
      }
      EXPECT_GT(packs, 0u) << "rank " << rank.rank;
      EXPECT_EQ(packs * nodes, sends) << "rank " << rank.rank << " call " << c.iteration;
    }
  }
}

// OMNIB_DIRECT_LANES picks how many threads the direct route's two roles
// run on (engine/omni/direct_lanes.h): one runs the scan and the sums, two
// run them apart.
TEST(TraceEndToEnd, TheDirectRouteRunsOnTheLanesItIsGiven) {
  for (const char* lanes : {"1", "2"}) {
    SCOPED_TRACE(std::string("OMNIB_DIRECT_LANES=") + lanes);
    auto run = run_traced({"--algo", "omni", "--route", "direct", "--nodes", "3", "-b", "1M", "-e", "1M", "--workload",
                           "scattered", "--density", "0.01", "-n", "2"},
                          240, {std::string("OMNIB_DIRECT_LANES=") + lanes});
    ASSERT_EQ(run.cli.exit_code, 0);
    for (const RankTrace& rank : run.trace.ranks)
      for (const auto& c : rank.calls) {
        std::set<int> scanning, reducing;
        for (const auto& sp : c.spans) {
          if (sp.name == "scan") scanning.insert(sp.thread);
          if (sp.name == "reduce") reducing.insert(sp.thread);
        }
        ASSERT_EQ(scanning.size(), 1u) << "rank " << rank.rank;
        ASSERT_EQ(reducing.size(), 1u) << "rank " << rank.rank;
        EXPECT_EQ(*scanning.begin() == *reducing.begin(), std::string(lanes) == "1") << "rank " << rank.rank;
      }
  }
}

TEST(TraceEndToEnd, DedicatedAggregatorsAndTheFirstCallsOnly) {
  auto run = run_traced({"--algo", "omni,ps", "--nodes", "3", "--aggregators", "2", "-b", "4M", "-e", "4M",
                         "--density", "0.1", "-n", "10", "--trace-iters", "8"});
  ASSERT_EQ(run.cli.exit_code, 0);
  // Five processes on a small host: a few calls may lose a rank to the
  // scheduler (check_critical_paths allows a quarter); eight calls per
  // algorithm keep one unlucky call from being a quarter on its own.
  expect_valid_trace(run, 8);
  ASSERT_EQ(run.trace.ranks.size(), 5u);
  for (const RankTrace& rank : run.trace.ranks) {
    EXPECT_EQ(rank.worker, rank.rank < 3) << rank.rank;
    for (const auto& c : rank.calls) EXPECT_LT(c.iteration, 8u) << c.algo;
  }
  // The timed calls are all measured; only the first eight are traced.
  for (const auto& r : run.results["results"]) EXPECT_EQ(r["samples_us"].size(), 10u);
}

// --trace keeps every traced call's spans until the size ends: the
// resources verdict leaves the memory of the traced calls out, and says so
// when every call is traced.
TEST(TraceEndToEnd, TheResourcesVerdictLeavesTheTracedCallsOut) {
  auto all = run_traced({"--algo", "ring", "--nodes", "2", "-b", "64K", "-e", "64K", "-n", "40"});
  ASSERT_EQ(all.cli.exit_code, 0);
  const json& size = all.results["resources"]["sizes"][0];
  EXPECT_TRUE(size["rss"].is_null()) << size.dump();
  EXPECT_NE(size.value("rss_not_judged", "").find("--trace keeps"), std::string::npos) << size.dump();
  EXPECT_NE(all.cli.out.find("rss not judged: --trace keeps"), std::string::npos) << all.cli.out;
  auto first = run_traced({"--algo", "ring", "--nodes", "2", "-b", "64K", "-e", "64K", "-n", "40", "--trace-iters", "10"});
  ASSERT_EQ(first.cli.exit_code, 0);
  const json& judged = first.results["resources"]["sizes"][0];
  ASSERT_TRUE(judged["rss"].is_object()) << judged.dump();
  EXPECT_EQ(judged["rss"]["points"], 20) << "the later half of the 40 calls, all after the 10 traced";
  EXPECT_EQ(first.results["resources"]["verdict"], "flat") << first.cli.out;
}

TEST(TraceEndToEnd, FullBuffersDropSpansAndSaySo) {
  auto run = run_traced({"--algo", "omni", "--nodes", "3", "-b", "4M", "-e", "4M", "--density", "1", "-n", "2",
                         "--trace-buffer", "16"});
  ASSERT_EQ(run.cli.exit_code, 0);
  uint64_t dropped = 0;
  for (const auto& rank : run.trace.ranks) dropped += rank.dropped;
  EXPECT_GT(dropped, 0u);
  const auto& profile = run.results["results"][0]["profile"];
  EXPECT_EQ(profile["dropped_events"].get<uint64_t>(), dropped);
  EXPECT_NE(run.cli.out.find("spans were dropped"), std::string::npos) << run.cli.out;
  EXPECT_NE(run.cli.err.find("raise --trace-buffer"), std::string::npos) << run.cli.err;
  // No lane kept more than the buffer holds in one call.
  for (const auto& rank : run.trace.ranks)
    for (const auto& c : rank.calls) {
      std::map<int, int> per_thread;
      for (const auto& s : c.spans)
        if (s.kind != trace::Kind::kCall && s.kind != trace::Kind::kBarrier) ++per_thread[s.thread];
      for (const auto& [thread, n] : per_thread) EXPECT_LE(n, 16) << "rank " << rank.rank << " thread " << thread;
    }
}

TEST(TraceEndToEnd, AnExistingTraceIsKeptWithoutForce) {
  const std::string path = temp_path("kept.trace.json");
  std::ofstream(path) << "{\"keep\": true}\n";
  const std::vector<std::string> args{"allreduce", "--nodes", "2", "-b", "64K", "-e", "64K", "-n", "1", "-w", "0",
                                      "--algo", "ring", "--trace", path};
  auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("already exists"), std::string::npos) << r.err;
  EXPECT_EQ(read_json(path)["keep"], true);
  auto forced_args = args;
  forced_args.push_back("--force");
  auto forced = run_cli(forced_args);
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_TRUE(read_trace_file(path).is_ok());
}

// plots/trace_timeline.py draws one call of a trace (the picture in
// docs/profiling.md), and refuses what is not a trace.
TEST(TraceEndToEnd, TimelinePictureOfACall) {
  auto run = run_traced({"--algo", "ring,omni", "--nodes", "3", "-b", "1M", "-e", "1M", "--density", "0.1", "-n", "2"});
  ASSERT_EQ(run.cli.exit_code, 0);
  const std::string script = std::string(OMNIB_SOURCE_DIR) + "/plots/trace_timeline.py";
  const std::string png = temp_path("call.png");
  auto r = testing::run_binary("/usr/bin/python3", {script, run.trace_path, "-o", png, "--algo", "ring", "--iter", "1"},
                               {}, 300);
  if (r.exit_code == 6) GTEST_SKIP() << "no matplotlib for /usr/bin/python3: " << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(testing::slurp(png).substr(0, 8), std::string("\x89PNG\r\n\x1a\n"));
  auto wrong_call = testing::run_binary("/usr/bin/python3", {script, run.trace_path, "-o", png, "--iter", "9"}, {}, 300);
  EXPECT_EQ(wrong_call.exit_code, 2);
  EXPECT_NE(wrong_call.err.find("no traced call 9"), std::string::npos) << wrong_call.err;
  auto not_a_trace = testing::run_binary("/usr/bin/python3", {script, script, "-o", png}, {}, 300);
  EXPECT_EQ(not_a_trace.exit_code, 2);
}

TEST(TraceEndToEnd, SummarizeRefusesWhatIsNotATrace) {
  const std::string path = temp_path("results.json");
  std::ofstream(path) << "{\"schema_version\": 3, \"results\": []}\n";
  auto r = run_cli({"trace", "summarize", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not an omni-bench trace"), std::string::npos) << r.err;
  auto missing = run_cli({"trace", "summarize", temp_path("none.json")});
  EXPECT_EQ(missing.exit_code, 2);
}

// Under --net emulate every result carries the link limit, and --profile
// shows it. Needs root and iproute2, like the other emulation tests.
TEST(TraceEndToEnd, EmulatedLinksGiveTheLinkLimit) {
  if (!has_net_admin_privileges()) GTEST_SKIP() << "needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN)";
  const std::string results = temp_path("limit.json");
  auto r = run_cli({"allreduce", "--net", "emulate", "--link-rate", "200mbit", "--nodes", "3", "-b", "1M", "-e", "1M",
                    "--density", "1", "-n", "2", "-w", "1", "-T", "30", "--algo", "ring,omni", "--profile", "-J",
                    results},
                   {}, 180);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json doc = read_json(results);
  ASSERT_EQ(doc["results"].size(), 2u);
  for (const auto& rec : doc["results"]) {
    ASSERT_TRUE(rec.contains("link_limit")) << rec["algo"];
    const double limit_us = rec["link_limit"]["limit_us"].get<double>();
    const double link_bytes = rec["link_bytes"]["sent_per_rank_max"].get<double>();
    // 200 Mbit/s: the shaper's burst is 68 KiB (more than 2 ms of traffic).
    EXPECT_NEAR(limit_us, (link_bytes - 68 * 1024) * 8 / 200e6 * 1e6, 1e-6 * limit_us) << rec["algo"];
    const double of_limit = rec["link_limit"]["of_limit"].get<double>();
    EXPECT_NEAR(of_limit, limit_us / rec["time_us"]["median"].get<double>(), 1e-9) << rec["algo"];
    // The burst is credited: a shaped link cannot be beaten.
    EXPECT_GT(of_limit, 0.05) << rec["algo"];
    EXPECT_LE(of_limit, 1.0) << rec["algo"];
  }
  EXPECT_NE(r.out.find("of limit"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace omnib
