#include "tools/report/table_reporter.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "tools/config/link_shape.h"
#include "tools/common/size_parse.h"

namespace omnib {
namespace {

std::string bytes_or_na(std::optional<double> b) { return b ? format_bytes(*b) : "n/a"; }

// CPU time per wire byte in nanoseconds, or "-" when the backend counts no bytes.
std::string cpu_per_byte(const ResultRecord& r) {
  if (!r.cpu || !r.cpu->ns_per_wire_byte) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", *r.cpu->ns_per_wire_byte);
  return buf;
}

std::string times(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fx", x);
  return buf;
}

// "0", "1234", or "unchecked" (-c 0): an unchecked row never reads as correct.
std::string wrong_text(const ResultRecord& r) {
  if (!r.checked) return "unchecked";
  return std::to_string(r.wrong_elements);
}

// Every write ends with a flush, so a reader that went away (`| head`) is
// noticed at once: EPIPE, with SIGPIPE ignored by the ranks.
Status flushed(std::FILE* out) {
  if (std::fflush(out) == 0 && !std::ferror(out)) return Status::ok();
  if (errno == EPIPE) return output_closed_error(kOutputClosedNotice);
  return internal_error(std::string("writing the table failed: ") + std::strerror(errno));
}

}  // namespace

Status TableReporter::begin(const RunContext& context) {
  std::fprintf(out_, "# omni-bench %s\n", context.environment.value("version", "?").c_str());
  std::fprintf(out_, "# %s\n", context.command_line.c_str());
  const auto& env = context.environment;
  std::fprintf(out_, "# ranks: %d workers + %d aggregators, launcher %s, hosts %s\n",
               env.value("nodes", 0), env.value("aggregators", 0), env.value("launcher", "?").c_str(),
               env.contains("hosts") ? env["hosts"].dump().c_str() : "?");
  std::fprintf(out_, "# rendezvous: %s; start-up barrier median %.1f us\n", env.value("rendezvous", "?").c_str(),
               env.value("barrier_latency_us", 0.0));
  if (env.contains("transport"))
    std::fprintf(out_, "# transport of our algorithms: %s\n", env.value("transport", "?").c_str());
  std::fprintf(out_, "# times are per iteration, max over ranks; busbw uses the dense convention algbw*2(n-1)/n;\n");
  std::fprintf(out_, "# wire = measured bytes sent per iteration by the busiest rank, model = analytic bytes;\n");
  std::fprintf(out_, "# cpu/B = CPU time of all ranks per wire byte; every call's output is poisoned and checked;\n");
  std::fprintf(out_, "# speedup = the first algorithm's time / this row's; vs dense = the fastest dense algorithm's time\n");
  std::fprintf(out_, "#   of this size / this row's (dense: sends every element whatever the data)\n");
  const auto& cfg = context.configuration;
  if (cfg.contains("algos") && cfg["algos"].is_array()) {
    std::string algos;
    for (const auto& a : cfg["algos"]) algos += (algos.empty() ? "" : ",") + a.get<std::string>();
    std::fprintf(out_, "# algorithms: %s%s\n", algos.c_str(),
                 cfg.value("algos_default", false) ? " (no --algo: the default of this build and --device)" : "");
  }
  show_link_ = cfg.value("net", "") == "emulate";
  if (show_link_)
    std::fprintf(out_, "# net: emulated links of %s each way, %s delay; link = bytes the busiest rank's link sent "
                 "per iteration (all headers and ACKs);\n#   limit = link x 8 / rate, the fastest the busiest link "
                 "allows; of limit = limit / time\n",
                 format_link_rate(cfg.value("link_rate_bps", uint64_t{0})).c_str(),
                 format_link_delay(std::chrono::nanoseconds(cfg.value("link_delay_ns", int64_t{0}))).c_str());
  std::fprintf(out_, "#\n");
  std::fprintf(out_, "%12s %11s %6s %-22s %7s %7s %7s %11s %10s %10s %8s %8s %10s %10s %8s %8s %8s %9s", "size(B)",
               "count", "type", "algo", "dens", "blkdens", "union", "time(us)", "p95(us)", "p99(us)", "algbw", "busbw",
               "wire/rank", "model", "cpu/B", "speedup", "vs dense", "#wrong");
  if (show_link_) std::fprintf(out_, " %10s %10s %8s", "link/rank", "limit(us)", "of limit");
  std::fputc('\n', out_);
  std::fprintf(out_, "%12s %11s %6s %-22s %7s %7s %7s %11s %10s %10s %8s %8s %10s %10s %8s %8s %8s %9s", "", "", "",
               "", "", "", "", "median", "", "", "(GB/s)", "(GB/s)", "", "", "(ns)", "of 1st", "(best)", "");
  if (show_link_) std::fprintf(out_, " %10s %10s %8s", "", "", "");
  std::fputc('\n', out_);
  return flushed(out_);
}

Status TableReporter::add_group(const std::vector<ResultRecord>& group) {
  // Speedup column: how many times faster the first algorithm of the run
  // (the engine, by default) is than this row. The JSON carries every pair.
  const ResultRecord* first = nullptr;
  for (const auto& r : group)
    if (!r.skipped && !first) first = &r;
  for (const auto& r : group) {
    if (r.skipped) {
      std::fprintf(out_, "%12llu %11llu %6s %-22s  skipped: %s\n",
                   static_cast<unsigned long long>(r.config.size_bytes),
                   static_cast<unsigned long long>(r.config.count()), std::string(dtype_name(r.config.dtype)).c_str(),
                   r.algo.c_str(), r.skip_reason.c_str());
      continue;
    }
    std::string speedup = "-";
    auto it = first ? first->speedup_vs.find(r.algo) : std::map<std::string, double>::const_iterator();
    if (first && it != first->speedup_vs.end()) speedup = times(it->second);
    const std::string vs_dense = r.vs_best_dense ? times(r.vs_best_dense->speedup) : "-";
    std::fprintf(out_,
                 "%12llu %11llu %6s %-22s %7.4f %7.4f %7.4f %11.1f %10.1f %10.1f %8.3f %8.3f %10s %10s %8s %8s %8s %9s",
                 static_cast<unsigned long long>(r.config.size_bytes), static_cast<unsigned long long>(r.config.count()),
                 std::string(dtype_name(r.config.dtype)).c_str(), r.algo.c_str(), r.inputs.element_density,
                 r.inputs.block_density, r.inputs.union_block_density, r.time_us.median, r.time_us.p95, r.time_us.p99,
                 r.algbw_GBps, r.busbw_GBps, bytes_or_na(r.wire_sent_per_rank_max).c_str(),
                 format_bytes(r.analytic_sent_per_rank_max).c_str(), cpu_per_byte(r).c_str(), speedup.c_str(),
                 vs_dense.c_str(), wrong_text(r).c_str());
    if (show_link_) {
      std::fprintf(out_, " %10s", bytes_or_na(r.link_sent_per_rank_max).c_str());
      if (r.link_limit)
        std::fprintf(out_, " %10.1f %7.1f%%", r.link_limit->limit_us, 100 * r.link_limit->of_limit);
      else
        std::fprintf(out_, " %10s %8s", "-", "-");
    }
    std::fputc('\n', out_);
    ++rows_;
    busbw_sum_ += r.busbw_GBps;
    if (!r.checked) ++unchecked_rows_;
    if (r.correct == false) {
      ++wrong_rows_;
      std::fprintf(out_, "#   %s: WRONG in %llu of %llu checked calls (first: call %llu), %llu elements in all\n",
                   r.algo.c_str(), static_cast<unsigned long long>(r.wrong_calls),
                   static_cast<unsigned long long>(r.calls_checked),
                   static_cast<unsigned long long>(r.first_wrong_call.value_or(0)),
                   static_cast<unsigned long long>(r.wrong_elements));
    }
    if (!r.note.empty()) std::fprintf(out_, "#   %s: %s\n", r.algo.c_str(), r.note.c_str());
    note_cpu_wait(r);
    const bool known = std::any_of(setup_us_.begin(), setup_us_.end(), [&](const auto& s) { return s.first == r.algo; });
    if (r.setup_us && !known) setup_us_.push_back({r.algo, *r.setup_us});
  }
  if (const ResultRecord* best = fastest_dense(group))
    std::fprintf(out_, "#   best dense: %s (%.1f us)\n", best->algo.c_str(), best->time_us.median);
  else
    std::fprintf(out_, "#   best dense: none ran (vs dense needs a dense algorithm in --algo)\n");
  add_headline(group);
  return flushed(out_);
}

// A row whose slowest rank waited for a CPU past kHostBoundWaitShare of the
// call time measured the host: said under the row, and the worst in the footer.
void TableReporter::note_cpu_wait(const ResultRecord& r) {
  const std::optional<double> share = r.cpu ? r.cpu->wait_share_max() : std::nullopt;
  if (!share) return;
  if (!max_wait_ || *share > max_wait_->second) max_wait_ = {r.algo + " " + format_size(r.config.size_bytes), *share};
  if (*share > kHostBoundWaitShare)
    std::fprintf(out_,
                 "#   %s: HOST-BOUND: a rank's threads waited for a CPU %.0f%% of the call time (runnable, not "
                 "running): this row measured the host, not the network\n",
                 r.algo.c_str(), 100 * *share);
}

// "# CPU wait             : at most 3% of a call (omni 32M): the host kept up"
void TableReporter::print_cpu_wait() {
  if (!max_wait_) return;
  const bool bound = max_wait_->second > kHostBoundWaitShare;
  if (bound)
    std::fprintf(out_,
                 "# CPU wait             : at most %.0f%% of a call (%s): rows marked HOST-BOUND measured this "
                 "host's CPUs, not the network\n",
                 100 * max_wait_->second, max_wait_->first.c_str());
  else
    std::fprintf(out_, "# CPU wait             : at most %.0f%% of a call (%s): the host kept up (below %.0f%%)\n",
                 100 * max_wait_->second, max_wait_->first.c_str(), 100 * kHostBoundWaitShare);
}

// "# Link set-up          : omni 12.3 ms, ring 1.1 ms (max over ranks)"
void TableReporter::print_setup() {
  if (setup_us_.empty()) return;
  std::string list;
  for (const auto& [algo, us] : setup_us_) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%s%s %.1f ms", list.empty() ? "" : ", ", algo.c_str(), us / 1000);
    list += buf;
  }
  std::fprintf(out_, "# Link set-up          : %s (max over ranks)\n", list.c_str());
}

Status TableReporter::checkpoint(const std::vector<ResultRecord>& in_progress) {
  for (const auto& r : in_progress) {
    if (r.skipped || !r.duration) continue;
    std::fprintf(out_, "# checkpoint: %s B %s: %llu calls in %.0f of %.0f s, median %.1f us, %s\n",
                 format_size(r.config.size_bytes).c_str(), r.algo.c_str(),
                 static_cast<unsigned long long>(r.duration->timed_calls), r.duration->elapsed_s,
                 r.duration->requested_s, r.time_us.median,
                 r.checked ? (r.wrong_calls ? "WRONG" : "correct so far") : "unchecked");
  }
  return flushed(out_);
}

void TableReporter::add_headline(const std::vector<ResultRecord>& group) {
  for (const auto& r : group) {
    if (r.skipped || r.dense) continue;
    if (subject_.empty()) subject_ = r.algo;
    if (r.algo != subject_) continue;
    headlines_.push_back({r.config.size_bytes, r.vs_best_dense});
    return;
  }
}

// "# omni vs best dense  : 2.31x (ring)", or its range over the sizes with
// the lowest named: the speedup a user gets over what they would run instead.
void TableReporter::print_headline() {
  if (subject_.empty()) return;  // no sparse algorithm ran
  const Headline* low = nullptr;
  const Headline* high = nullptr;
  size_t without = 0;
  for (const auto& h : headlines_) {
    if (!h.vs) {
      ++without;
      continue;
    }
    if (!low || h.vs->speedup < low->vs->speedup) low = &h;
    if (!high || h.vs->speedup > high->vs->speedup) high = &h;
  }
  const std::string label = "# " + subject_ + " vs best dense";
  if (!low) {
    std::fprintf(out_, "%-22s : n/a (no dense algorithm ran)\n", label.c_str());
    return;
  }
  if (headlines_.size() == 1) {
    std::fprintf(out_, "%-22s : %s (%s)\n", label.c_str(), times(low->vs->speedup).c_str(), low->vs->algo.c_str());
    return;
  }
  std::fprintf(out_, "%-22s : %s to %s over %zu sizes (lowest: %s vs %s at %s)%s\n", label.c_str(),
               times(low->vs->speedup).c_str(), times(high->vs->speedup).c_str(), headlines_.size() - without,
               times(low->vs->speedup).c_str(), low->vs->algo.c_str(), format_size(low->size_bytes).c_str(),
               without ? "; some sizes had no dense algorithm" : "");
}

Status TableReporter::finish() {
  if (unchecked_rows_ == rows_ && rows_ > 0)
    std::fprintf(out_, "# Out of bounds values : unchecked (-c 0)\n");
  else
    std::fprintf(out_, "# Out of bounds values : %d %s%s\n", wrong_rows_, wrong_rows_ ? "FAILED" : "OK",
                 unchecked_rows_ ? " (some rows unchecked)" : "");
  std::fprintf(out_, "# Avg bus bandwidth    : %.3f GB/s (dense convention)\n", rows_ ? busbw_sum_ / rows_ : 0.0);
  print_setup();
  print_headline();
  print_cpu_wait();
  if (resources_) std::fprintf(out_, "%s\n", resources_footer(*resources_).c_str());
  return flushed(out_);
}

}  // namespace omnib
