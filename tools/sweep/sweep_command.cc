#include "tools/sweep/sweep_command.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "tools/allreduce/allreduce_options.h"
#include "tools/common/atomic_file.h"
#include "tools/compare/result_file.h"
#include "tools/process/child_process.h"
#include "tools/record/environment_info.h"
#include "tools/report/json_reporter.h"
#include "tools/sweep/progress_bar.h"
#include "tools/sweep/sweep_plan.h"
#include "tools/sweep/sweep_summary.h"

namespace omnib {
namespace {

volatile sig_atomic_t g_stop_signal = 0;
volatile sig_atomic_t g_child = 0;

// SIGINT/SIGTERM: stop after the point in progress, which is told to stop
// too (its launcher ends its ranks); what finished stays in the JSON.
void on_stop(int sig) {
  g_stop_signal = sig;
  if (g_child > 0) kill(static_cast<pid_t>(g_child), sig);
}

class StopSignals {
 public:
  StopSignals() {
    struct sigaction sa {};
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

int usage(const std::string& message) {
  std::fprintf(stderr, "omni-bench sweep: %s\n", message.c_str());
  return exit_code(Code::kUsage);
}

int failure(const Status& s) {
  std::fprintf(stderr, "omni-bench sweep: %s\n", s.message().c_str());
  return exit_code(s.code());
}

// Where each point's allreduce writes its records: beside the -J file, or in
// a private temporary folder when -J is a stream (/dev/stdout, a FIFO), which
// has no folder of its own to write in. Removes what is left when it goes.
class PartFile {
 public:
  PartFile() = default;
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;
  ~PartFile() {
    if (!path_.empty()) unlink(path_.c_str());
    if (!folder_.empty()) rmdir(folder_.c_str());
  }
  Status place(const std::string& json_path, OutputKind kind) {
    const std::string pid = std::to_string(getpid());
    if (kind != OutputKind::kStream) {
      path_ = json_path + ".part." + pid;
      return Status::ok();
    }
    const char* tmpdir = std::getenv("TMPDIR");
    std::string folder = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/omni-bench-sweep.XXXXXX";
    if (!mkdtemp(folder.data()))
      return usage_error("cannot make a temporary folder '" + folder +
                         "' for the points' results: " + std::strerror(errno) + " (set TMPDIR to a writable folder)");
    folder_ = folder;
    path_ = folder_ + "/part." + pid + ".json";
    return Status::ok();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_, folder_;
};

bool file_exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

Result<SweepLists> lists_of(const SweepOptions& o) {
  SweepLists l;
  l.densities = split_list(o.densities);
  if (!o.block_sizes.empty()) l.block_sizes = split_list(o.block_sizes);
  l.nodes = split_list(o.nodes);
  l.aggregators = split_list(o.aggregators);
  OMNIB_RETURN_IF_ERROR(check_aggregator_list(l.aggregators));
  l.overlaps = split_list(o.overlaps);
  l.workloads = split_list(o.workloads);
  l.datatypes = split_list(o.datatypes);
  l.encodings = split_list(o.encodings);
  l.link_rates = split_list(o.link_rates);
  l.algos = split_list(o.algos);
  if (o.net != "loopback" && o.net != "emulate") return usage_error("--net '" + o.net + "': use loopback or emulate");
  l.emulate = o.net == "emulate";
  l.simulate = o.simulate;
  if (l.simulate && l.emulate)
    return usage_error("--simulate and --net emulate: the points are either simulated or run, choose one");
  if (!o.sizes.empty())
    l.size_args = {"--sizes", o.sizes};
  else
    l.size_args = {"-b", o.min_bytes, "-e", o.max_bytes, "-f", o.step_factor};
  l.passthrough = o.passthrough;
  for (const auto* list : {&l.densities, &l.block_sizes, &l.nodes, &l.overlaps, &l.workloads, &l.datatypes, &l.algos})
    if (list->empty()) return usage_error("an empty list was given; every list needs at least one value");
  return l;
}

nlohmann::json configuration_of(const SweepLists& l) {
  return {{"densities", l.densities},
          {"block_sizes", l.block_sizes},
          {"nodes", l.nodes},
          {"aggregators", l.aggregators},
          {"overlaps", l.overlaps},
          {"workloads", l.workloads},
          {"datatypes", l.datatypes},
          {"encodings", l.encodings},
          {"link_rates", l.link_rates},
          {"net", l.simulate ? "simulate" : l.emulate ? "emulate" : "loopback"},
          {"algos", l.algos},
          {"size_options", l.size_args},
          {"allreduce_options", l.passthrough}};
}

// Runs one point's allreduce into `part`; returns its exit code.
int run_point(const SweepPoint& p, const std::string& part) {
  ChildSpec child;
  child.argv = {"/proc/self/exe"};
  for (const auto& a : p.allreduce_args(part)) child.argv.push_back(a);
  child.die_with_parent = true;
  auto started = start_child(child);
  if (!started.is_ok()) return 127;
  g_child = started.value().pid;
  const int code = wait_child(started.value().pid);
  g_child = 0;
  return code;
}

// The records a sweep starts from: none, or with --resume those the -J file
// holds. A usage error when the file exists and neither --resume nor --force
// was given; a stream (a FIFO, a device) has nothing to resume, and the
// reader refuses it.
Result<std::vector<ResultRecord>> starting_records(const SweepOptions& o, OutputKind kind) {
  if (kind == OutputKind::kFile && !o.resume && !o.force)
    return usage_error("'" + o.json_path +
                       "' already exists: pass --resume to continue it, --force to replace it, "
                       "or choose another file");
  if (!o.resume || kind == OutputKind::kNew) return std::vector<ResultRecord>{};
  auto file = load_result_file(o.json_path);
  if (!file.is_ok()) return file.status().with_context("cannot resume: ");
  return file.take().records;
}

// Adds whatever a point's run finished to `report` (even when it failed or
// was stopped part way) and counts its configurations into `finished`.
Status keep_point_records(const std::string& part, JsonReporter& report, SweepSummary& summary, size_t& finished) {
  if (!file_exists(part)) return Status::ok();
  auto kept = load_result_file(part);
  unlink(part.c_str());
  if (!kept.is_ok()) return Status::ok();
  std::set<std::string> configs;
  for (const auto& r : kept.value().records) configs.insert(r.config.key_text());
  finished += configs.size();
  summary.add(kept.value().records);
  return report.add_group(kept.value().records);
}

// The last write and the exit code: 128 + the signal that stopped the
// sweep (whose file then says it is not complete, and --resume goes on), or
// `worst`, the first failing point's code.
int finish_sweep(JsonReporter& report, const SweepSummary& summary, size_t finished, const std::string& path,
                 int worst) {
  const Status s = g_stop_signal ? report.finish_interrupted() : report.finish();
  if (!s.is_ok()) return failure(s);
  if (g_stop_signal) {
    std::fprintf(stderr, "omni-bench sweep: stopped by signal %d; %zu configuration(s) finished are in %s\n",
                 static_cast<int>(g_stop_signal), finished, path.c_str());
    return 128 + g_stop_signal;
  }
  summary.print(stdout);
  std::fflush(stdout);
  std::fprintf(stderr, "omni-bench sweep: %zu configuration(s) run, results in %s\n", finished, path.c_str());
  return worst;
}

// Every point is planned before any runs: a point allreduce would refuse
// stops the sweep here, not half-way; a sweep too large to plan stops before
// planning. Resuming drops the points `existing` has finished, and the
// records of --duration checkpoints (they run again).
Result<std::vector<SweepPoint>> points_to_run(const SweepOptions& o, const SweepLists& lists,
                                              std::vector<ResultRecord>& existing) {
  OMNIB_RETURN_IF_ERROR(check_sweep_size(lists));
  auto points = expand_sweep(lists);
  if (!points.is_ok()) return points.status();
  const size_t skipped = o.resume ? drop_finished(points.value(), finished_keys(existing)) : 0;
  const size_t unfinished = drop_unfinished(existing);
  if (skipped) std::fprintf(stderr, "omni-bench sweep: resuming, %zu configuration(s) already done\n", skipped);
  if (unfinished)
    std::fprintf(stderr, "omni-bench sweep: resuming, %zu record(s) of --duration checkpoints run again\n", unfinished);
  return points;
}

}  // namespace

void bind_sweep_options(CLI::App& cmd, SweepOptions& o) {
  cmd.add_option("--density", o.densities, "comma list of densities")->capture_default_str();
  cmd.add_option("--block-size", o.block_sizes, "comma list of block sizes (default: the engine's)");
  cmd.add_option("--nodes", o.nodes, "comma list of node counts")->capture_default_str();
  cmd.add_option("--aggregators", o.aggregators,
                 "comma list of dedicated aggregator counts; 'nodes' means one per worker (default: colocated)");
  cmd.add_option("--overlap", o.overlaps, "comma list of overlap modes")->capture_default_str();
  cmd.add_option("--workload", o.workloads, "comma list of workloads")->capture_default_str();
  cmd.add_option("-d,--datatype", o.datatypes, "comma list of element types (float, int32, bf16, half)")
      ->capture_default_str();
  cmd.add_option("--encoding", o.encodings, "comma list of omni batch encodings (default: allreduce's, auto)");
  cmd.add_option("--link-rate", o.link_rates, "comma list of link rates: emulated (implies --net emulate), or simulated with --simulate");
  cmd.add_option("--net", o.net, "loopback, or emulate for every point (implied by --link-rate)")
      ->capture_default_str();
  cmd.add_flag("--simulate", o.simulate,
               "simulate every point (`omni-bench simulate`: --topology, --link-delay, --calibration pass through; "
               "--link-rate sets the simulated links) instead of running it");
  cmd.add_option("--algo", o.algos, "comma list of algorithms (measured together at every point)")
      ->capture_default_str();
  cmd.add_option("--sizes", o.sizes, "comma list of sizes (instead of -b/-e/-f)");
  cmd.add_option("-b,--minbytes", o.min_bytes, "smallest size")->capture_default_str();
  cmd.add_option("-e,--maxbytes", o.max_bytes, "largest size")->capture_default_str();
  cmd.add_option("-f,--stepfactor", o.step_factor, "size multiplier")->capture_default_str();
  cmd.add_option("-J,--json", o.json_path, "results file (required)")->required();
  cmd.add_flag("--resume", o.resume, "keep the results already in the file and skip their configurations");
  cmd.add_flag("--force", o.force, "replace an existing results file");
  cmd.allow_extras();  // everything else goes to each point's run (-n, -w, -T, -d, --seed, --topology, ...)
}

int run_sweep_command(SweepOptions& o, const std::vector<std::string>& argv) {
  auto lists = lists_of(o);
  if (!lists.is_ok()) return usage(lists.status().message());
  if (o.resume && o.force) return usage("--resume keeps the file and --force replaces it: choose one");
  auto kind = output_kind(o.json_path);
  if (!kind.is_ok()) return usage(kind.status().message());
  auto kept = starting_records(o, kind.value());
  if (!kept.is_ok()) return usage(kept.status().message());
  std::vector<ResultRecord>& existing = kept.value();
  auto points = points_to_run(o, lists.value(), existing);
  if (!points.is_ok()) return usage(points.status().message());
  size_t total = 0;
  for (const auto& p : points.value()) total += p.todo.size();

  RunContext context;
  for (const auto& a : argv) context.command_line += (context.command_line.empty() ? "" : " ") + a;
  context.configuration = configuration_of(lists.value());
  context.environment = build_environment();
  JsonReporter report(o.json_path, existing);
  Status s = report.begin(context);
  if (!s.is_ok()) return failure(s);

  StopSignals signals;
  ProgressBar bar(total, stderr_is_terminal());
  PartFile part_file;
  s = part_file.place(o.json_path, kind.value());
  if (!s.is_ok()) return failure(s);
  const std::string& part = part_file.path();
  SweepSummary summary;  // the table under the sweep
  size_t done = 0;       // configurations attempted (the progress bar)
  size_t finished = 0;   // configurations whose records came back
  int worst = 0;
  for (const auto& p : points.value()) {
    if (g_stop_signal) break;
    bar.update(done, p.description);
    unlink(part.c_str());
    bar.clear();
    const int code = run_point(p, part);
    s = keep_point_records(part, report, summary, finished);
    if (!s.is_ok()) return failure(s);
    if (code != 0 && !g_stop_signal) {
      std::fprintf(stderr, "omni-bench sweep: point (%s) failed with exit code %d\n", p.description.c_str(), code);
      if (worst == 0) worst = code;
      // A usage error will repeat at every point: stop early.
      if (code == exit_code(Code::kUsage)) break;
    }
    done += p.todo.size();
    bar.update(done, p.description);
  }
  bar.clear();
  return finish_sweep(report, summary, finished, o.json_path, worst);
}

}  // namespace omnib
