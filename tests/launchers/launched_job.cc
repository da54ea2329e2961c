#include "tests/launchers/launched_job.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "engine/auth/job_token.h"
#include "tests/support/rank_launcher.h"

namespace omnib::testing {
namespace {

// Small and quick, but every call checked and two algorithms: enough for
// the ranks to exchange data every way the job needs.
const std::vector<std::string> kAllreduceArgs = {"allreduce", "--algo", "omni,ring", "-b", "256K", "-e", "256K",
                                                 "--density", "0.1", "-n", "3", "-w", "1", "-T", "20"};

int count_lines(const std::string& text, const std::string& prefix) {
  int n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) ++n;
  return n;
}

// What the JSON says of the job itself: launcher, ranks, rendezvous.
void check_environment(const nlohmann::json& env, const LaunchSpec& spec, const std::string& launcher,
                       std::vector<std::string>& problems) {
  const std::string seen_launcher = env.value("launcher", "");
  if (seen_launcher != launcher)
    problems.push_back("the ranks saw launcher '" + seen_launcher + "', not " + launcher +
                       " (they did not read the launcher's rank environment)");
  const int ranks = env.value("ranks", -1);
  if (ranks != spec.ranks)
    problems.push_back("the job had " + std::to_string(ranks) + " ranks, not the " + std::to_string(spec.ranks) +
                       " the launcher started");
  const size_t hosts = env.contains("hosts") && env["hosts"].is_array() ? env["hosts"].size() : 0;
  if (hosts != static_cast<size_t>(spec.ranks))
    problems.push_back("the JSON lists " + std::to_string(hosts) + " hosts, not one per rank");
  const std::string mode = env.value("rendezvous", "");
  if (mode != "authenticated")
    problems.push_back("the rendezvous was '" + mode + "', not authenticated by OMNIB_JOB_TOKEN");
}

// Every row ran, was checked, and matched the reference sum.
void check_results(const nlohmann::json& results, std::vector<std::string>& problems) {
  if (!results.is_array() || results.size() != 2) {
    problems.push_back("expected 2 result rows (omni and ring), got " +
                       std::to_string(results.is_array() ? results.size() : 0));
    return;
  }
  for (const auto& r : results) {
    const std::string algo = r.value("algo", "?");
    if (r.value("skipped", false)) problems.push_back(algo + " was skipped");
    if (!r.value("checked", false)) problems.push_back(algo + " was not checked");
    if (!r.value("correct", false) || r.value("wrong_elements", uint64_t{1}) != 0)
      problems.push_back(algo + " gave wrong results: " + r.dump());
  }
}

// The value of `key` in scontrol's one-line record ("JobState=COMPLETED ...").
std::string field(const std::string& record, const std::string& key) {
  const size_t at = record.find(" " + key + "=");
  if (at == std::string::npos) return "";
  const size_t start = at + key.size() + 2;
  return record.substr(start, record.find_first_of(" \n", start) - start);
}

// Waits for batch job `id` to end; its exit code as a shell would give it
// (128 + signal when killed), or -1 if it has not ended within `limit`.
int wait_for_batch_job(const std::string& id, std::chrono::seconds limit) {
  const std::string scontrol = find_on_path("scontrol");
  const auto deadline = std::chrono::steady_clock::now() + limit;
  const std::set<std::string> running = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED"};
  while (std::chrono::steady_clock::now() < deadline) {
    const auto r = run_binary(scontrol, {"show", "job", "-o", id}, {}, 30);
    const std::string state = field(" " + r.out, "JobState");
    if (!state.empty() && !running.count(state)) {
      const std::string code = field(" " + r.out, "ExitCode");  // "exit:signal"
      const int exit = std::atoi(code.c_str()), signal = std::atoi(code.substr(code.find(':') + 1).c_str());
      return signal ? 128 + signal : exit;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return -1;
}

}  // namespace

std::string find_on_path(const std::string& tool) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + tool;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

LaunchedJob run_launched_job(const LaunchSpec& spec) {
  LaunchedJob job;
  const std::string json = temp_path("launched.json");
  // Empty values count as unset: nothing this process was given leaks in.
  std::vector<std::string> env = {"MASTER_ADDR=", "MASTER_PORT="};
  if (spec.export_rendezvous) {
    const int port = free_loopback_port();
    if (port < 0) ADD_FAILURE() << "no free loopback port for MASTER_PORT";
    env = {"MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port)};
  }
  if (spec.export_token) job.token = JobToken::random().value().hex();
  env.push_back("OMNIB_JOB_TOKEN=" + job.token);  // empty: none, whatever this process was given
  std::vector<std::string> args(spec.launcher.begin() + 1, spec.launcher.end());
  if (!spec.withheld.empty()) {
    args.push_back("/usr/bin/env");
    for (const auto& var : spec.withheld) args.insert(args.end(), {"-u", var});
  }
  args.push_back(omni_bench_binary());
  args.insert(args.end(), kAllreduceArgs.begin(), kAllreduceArgs.end());
  args.insert(args.end(), {"-J", json});
  job.cli = run_binary(spec.launcher.front(), args, env, 150);
  if (spec.batch && job.cli.exit_code == 0) {
    const std::string id = job.cli.out.substr(0, job.cli.out.find_first_of(";\n"));
    job.cli.exit_code = wait_for_batch_job(id, std::chrono::seconds(150));
  }
  if (!spec.output_file.empty()) job.cli.out = slurp(spec.output_file);
  if (access(json.c_str(), R_OK) == 0) job.doc = nlohmann::json::parse(std::ifstream(json), nullptr, false);
  return job;
}

std::vector<std::string> launched_job_problems(const LaunchedJob& job, const LaunchSpec& spec,
                                               const std::string& launcher) {
  std::vector<std::string> problems;
  if (job.cli.exit_code != 0)
    problems.push_back((spec.batch ? "the batch job of " : "") + spec.launcher.front() + " exited " +
                       std::to_string(job.cli.exit_code) + "; stderr:\n" + job.cli.err);
  // Rank 0 alone prints the table: one header per job.
  const int tables = count_lines(job.cli.out, "# rendezvous:");
  if (tables == 0) problems.push_back("no table was printed: rank 0 did not finish");
  if (tables > 1)
    problems.push_back(std::to_string(tables) + " tables were printed, not one: the ranks ran separate jobs");
  // The secret is proved, never shown.
  if (!job.token.empty() && (job.cli.out + job.cli.err + job.doc.dump()).find(job.token) != std::string::npos)
    problems.push_back("OMNIB_JOB_TOKEN appears in the output or the JSON");
  if (!job.doc.is_object()) {
    problems.push_back("rank 0 wrote no JSON result");
    return problems;
  }
  if (!job.doc.contains("environment") || !job.doc["environment"].is_object())
    problems.push_back("the JSON has no environment block");
  else
    check_environment(job.doc["environment"], spec, launcher, problems);
  check_results(job.doc.value("results", nlohmann::json()), problems);
  return problems;
}

std::string joined_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "  - " + l + "\n";
  return out;
}

}  // namespace omnib::testing
