#include "tools/sweep/sweep_command.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tools/allreduce_options.h"
#include "tools/report/atomic_file.h"
#include "tools/report/result_record.h"
#include "tools/sweep/progress_bar.h"
#include "tools/sweep/sweep_plan.h"
#include "tools/workloads/workload_choice.h"

namespace omnib {
namespace {

using nlohmann::json;

int usage(const std::string& message) {
  std::fprintf(stderr, "omni-bench sweep: %s\n", message.c_str());
  return exit_code(Code::kUsage);
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

// Runs `omni-bench allreduce ARGS` and returns its exit code.
int run_allreduce(const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    std::string self = "/proc/self/exe";
    argv.push_back(self.data());
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(self.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

json read_results_file(const std::string& path, std::string* error) {
  std::ifstream f(path);
  try {
    return json::parse(f);
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
}

}  // namespace

void bind_sweep_options(CLI::App& cmd, SweepOptions& o) {
  cmd.add_option("--density", o.densities, "comma list of densities")->capture_default_str();
  cmd.add_option("--block-size", o.block_sizes, "comma list of block sizes")->capture_default_str();
  cmd.add_option("--nodes", o.nodes, "comma list of node counts")->capture_default_str();
  cmd.add_option("--aggregators", o.aggregators,
                 "comma list of dedicated aggregator counts; 'nodes' means one per worker (default: colocated)");
  cmd.add_option("--overlap", o.overlaps, "comma list of overlap modes")->capture_default_str();
  cmd.add_option("--workload", o.workloads, "comma list of workloads")->capture_default_str();
  cmd.add_option("--link-rate", o.link_rates, "comma list of emulated link rates (runs with --net emulate)");
  cmd.add_option("--algo", o.algos, "comma list of algorithms (measured together at every point)")
      ->capture_default_str();
  cmd.add_option("--sizes", o.sizes, "comma list of sizes (instead of -b/-e/-f)");
  cmd.add_option("-b,--minbytes", o.min_bytes, "smallest size")->capture_default_str();
  cmd.add_option("-e,--maxbytes", o.max_bytes, "largest size")->capture_default_str();
  cmd.add_option("-f,--stepfactor", o.step_factor, "size multiplier")->capture_default_str();
  cmd.add_option("-J,--json", o.json_path, "results file (required)")->required();
  cmd.add_flag("--resume", o.resume, "keep the results already in the file and skip their configurations");
  cmd.add_flag("--force", o.force, "replace an existing results file");
  cmd.allow_extras();  // everything else goes to each allreduce run (-n, -w, -T, -d, --seed, ...)
}

int run_sweep_command(SweepOptions& o, const std::vector<std::string>& argv) {
  SweepLists lists;
  lists.densities = split_list(o.densities);
  lists.block_sizes = split_list(o.block_sizes);
  lists.nodes = split_list(o.nodes);
  lists.aggregators = split_list(o.aggregators);
  if (Status s = check_aggregator_list(lists.aggregators); !s.is_ok()) return usage(s.message());
  lists.overlaps = split_list(o.overlaps);
  lists.workloads = split_list(o.workloads);
  lists.link_rates = split_list(o.link_rates);
  lists.algos = split_list(o.algos);
  auto sizes = sweep_sizes(o.sizes, o.min_bytes, o.max_bytes, o.step_factor);
  if (!sizes.is_ok()) return usage(sizes.status().message());
  lists.sizes = sizes.value();
  for (const auto* l : {&lists.densities, &lists.block_sizes, &lists.nodes, &lists.overlaps, &lists.workloads, &lists.algos})
    if (l->empty()) return usage("an empty list was given; every list needs at least one value");
  if (o.resume && o.force) return usage("--resume keeps the file and --force replaces it: choose one");

  json results = json::array();
  json environment;
  if (file_exists(o.json_path)) {
    if (!o.resume && !o.force)
      return usage("'" + o.json_path + "' already exists: pass --resume to continue it, --force to replace it, "
                   "or choose another file");
    if (o.resume) {
      std::string error;
      json doc = read_results_file(o.json_path, &error);
      if (doc.is_null()) return usage("cannot resume from '" + o.json_path + "': " + error);
      if (doc.value("schema_version", 0) != kSchemaVersion)
        return usage("cannot resume '" + o.json_path + "': it has schema_version " +
                     std::to_string(doc.value("schema_version", 0)) + ", this build writes " +
                     std::to_string(kSchemaVersion));
      results = doc.value("results", json::array());
      environment = doc.value("environment", json());
    }
  }

  // Results name a workload by its label ("zipf" runs as "zipf:1.1").
  auto label = [](const std::string& w) {
    if (w == "npy") return w;
    auto choice = choose_workload(w, "", 0, DType::kFloat32);
    return choice.is_ok() ? choice.value().shape.label : w;
  };
  std::vector<SweepPoint> points = expand_sweep(lists, label);
  size_t skipped = o.resume ? drop_finished(points, lists.algos, results) : 0;
  size_t total = 0;
  for (const auto& p : points) total += p.sizes.size();
  if (skipped) std::fprintf(stderr, "omni-bench sweep: resuming, %zu configuration(s) already done\n", skipped);

  std::string command_line;
  for (const auto& a : argv) command_line += (command_line.empty() ? "" : " ") + a;
  json configuration = {{"densities", lists.densities}, {"block_sizes", lists.block_sizes},
                        {"nodes", lists.nodes},         {"aggregators", lists.aggregators},
                        {"overlaps", lists.overlaps},
                        {"workloads", lists.workloads}, {"link_rates", lists.link_rates},
                        {"algos", lists.algos},         {"sizes", lists.sizes},
                        {"allreduce_options", o.passthrough}};
  auto write_doc = [&]() {
    json doc = {{"schema_version", kSchemaVersion}, {"tool", "omni-bench"},  {"command_line", command_line},
                {"configuration", configuration},  {"environment", environment}, {"results", results}};
    return write_file_atomically(o.json_path, doc.dump(2) + "\n");
  };
  Status s = write_doc();
  if (!s.is_ok()) return usage(s.message());

  ProgressBar bar(total, stderr_is_terminal());
  const std::string part = o.json_path + ".part";
  size_t done = 0;
  int worst = 0;
  for (const auto& p : points) {
    bar.update(done, p.describe());
    std::vector<std::string> args{"allreduce"};
    for (auto& a : p.allreduce_args(lists.algos)) args.push_back(a);
    for (const auto& extra : o.passthrough) args.push_back(extra);
    args.insert(args.end(), {"-J", part, "--force"});
    unlink(part.c_str());
    bar.clear();
    int code = run_allreduce(args);
    // Keep whatever the run finished, even when it failed part way.
    std::string error;
    json partial = file_exists(part) ? read_results_file(part, &error) : json();
    unlink(part.c_str());
    if (partial.is_object()) {
      if (environment.is_null()) environment = partial.value("environment", json());
      for (auto r : partial.value("results", json::array())) {
        if (!p.link_rate.empty()) r["link_rate"] = p.link_rate;
        results.push_back(r);
      }
      s = write_doc();
      if (!s.is_ok()) return usage(s.message());
    }
    if (code != 0) {
      std::fprintf(stderr, "omni-bench sweep: point (%s) failed with exit code %d\n", p.describe().c_str(), code);
      if (worst == 0) worst = code;
      // A usage error will repeat at every point: stop early.
      if (code == exit_code(Code::kUsage)) break;
    }
    done += p.sizes.size();
    bar.update(done, p.describe());
  }
  bar.clear();
  std::fprintf(stderr, "omni-bench sweep: %zu configuration(s) run, results in %s\n", done, o.json_path.c_str());
  return worst;
}

}  // namespace omnib
