#include "tools/report/table_reporter.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "tools/common/size_parse.h"
#include "tools/config/link_shape.h"
#include "tools/record/record_speedups.h"
#include "tools/report/table_rows.h"

namespace omnib {
namespace {

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
  print_wrapped(out_, "# ", context.command_line);
  const auto& env = context.environment;
  print_wrapped(out_, "# ranks: ",
                std::to_string(env.value("nodes", 0)) + " workers + " + std::to_string(env.value("aggregators", 0)) +
                    " aggregators, launcher " + env.value("launcher", "?") + ", hosts " +
                    (env.contains("hosts") ? env["hosts"].dump() : "?"));
  std::fprintf(out_, "# rendezvous: %s; start-up barrier median %.1f us\n", env.value("rendezvous", "?").c_str(),
               env.value("barrier_latency_us", 0.0));
  if (env.contains("transport"))
    std::fprintf(out_, "# transport of our algorithms: %s\n", env.value("transport", "?").c_str());
  const auto& cfg = context.configuration;
  if (cfg.contains("algos") && cfg["algos"].is_array()) {
    std::string algos;
    for (const auto& a : cfg["algos"]) algos += (algos.empty() ? "" : ",") + a.get<std::string>();
    std::fprintf(out_, "# algorithms: %s%s\n", algos.c_str(),
                 cfg.value("algos_default", false) ? " (no --algo: the default of this build and --device)" : "");
  }
  layout_.link = cfg.value("net", "") == "emulate";
  if (layout_.link) {
    const std::string tcp_cc = cfg.value("tcp_cc", "");
    const std::string idle_restart = cfg.value("tcp_idle_restart", "");
    print_wrapped(out_, "# net: ",
                  "emulated links of " + format_link_rate(cfg.value("link_rate_bps", uint64_t{0})) + " each way, " +
                      format_link_delay(std::chrono::nanoseconds(cfg.value("link_delay_ns", int64_t{0}))) + " delay" +
                      (tcp_cc.empty() ? "" : ", TCP congestion control " + tcp_cc) +
                      (idle_restart.empty() ? "" : ", slow start after idle " + idle_restart));
  }
  print_table_legend(out_, layout_);
  std::fprintf(out_, "#\n");
  print_table_header(out_, layout_);
  return flushed(out_);
}

Status TableReporter::add_group(const std::vector<ResultRecord>& group) {
  // The ratio columns are against the first algorithm of the run that ran
  // (the engine, by default). The JSON carries every pair.
  const ResultRecord* first = nullptr;
  for (const auto& r : group)
    if (!r.skipped && !first) first = &r;
  if (!group.empty()) print_configuration_line(out_, layout_, first ? *first : group.front());
  for (const auto& r : group) {
    if (r.skipped) {
      print_skipped_row(out_, layout_, r);
      continue;
    }
    print_table_row(out_, layout_, r, first);
    count_row(r);
    if (r.correct == false)
      std::fprintf(out_, "#   %s: WRONG in %llu of %llu checked calls (first: call %llu), %llu elements in all\n",
                   r.algo.c_str(), static_cast<unsigned long long>(r.wrong_calls),
                   static_cast<unsigned long long>(r.calls_checked),
                   static_cast<unsigned long long>(r.first_wrong_call.value_or(0)),
                   static_cast<unsigned long long>(r.wrong_elements));
    if (!r.note.empty()) print_wrapped(out_, "#   " + r.algo + ": ", r.note);
    note_cpu_wait(r);
    if (r.link_retransmits_per_call) {
      link_counted_ = true;
      if (*r.link_retransmits_per_call > 0)
        retransmitted_.push_back({r.algo + " " + format_size(r.config.size_bytes), *r.link_retransmits_per_call});
    }
  }
  if (const ResultRecord* best = fastest_dense(group))
    std::fprintf(out_, "#   best dense: %s (%.1f us)\n", best->algo.c_str(), best->time_us.median);
  else
    std::fprintf(out_, "#   best dense: none ran (vs dense needs a dense algorithm in --algo)\n");
  add_headline(group);
  return flushed(out_);
}

// What the footer sums up: wrong and unchecked rows, dense busbw, set-up times.
void TableReporter::count_row(const ResultRecord& r) {
  ++rows_;
  if (!r.checked) ++unchecked_rows_;
  if (r.correct == false) ++wrong_rows_;
  if (r.dense) {
    auto it = std::find_if(busbw_.begin(), busbw_.end(), [&](const auto& b) { return b.algo == r.algo; });
    if (it == busbw_.end()) it = busbw_.insert(busbw_.end(), {r.algo, 0, 0});
    it->sum_GBps += r.busbw_GBps;
    ++it->rows;
  }
  const bool known = std::any_of(setup_us_.begin(), setup_us_.end(), [&](const auto& s) { return s.first == r.algo; });
  if (r.setup_us && !known) setup_us_.push_back({r.algo, *r.setup_us});
}

// "# Avg bus bandwidth    : ring 1.234, ps 0.912 GB/s (dense algorithms, ...)",
// as nccl-tests gives it; a sparse algorithm's busbw has no meaning.
void TableReporter::print_busbw() {
  std::string list;
  for (const auto& b : busbw_) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "%s%s %.3f", list.empty() ? "" : ", ", b.algo.c_str(), b.sum_GBps / b.rows);
    list += buf;
  }
  if (list.empty())
    list = "none (no dense algorithm ran)";
  else
    list += " GB/s (dense algorithms, the dense convention)";
  print_wrapped(out_, "# Avg bus bandwidth    : ", list);
}

// A row whose slowest rank waited for a CPU past kHostBoundWaitShare of the
// call time measured the host: the footer names it, with the share.
void TableReporter::note_cpu_wait(const ResultRecord& r) {
  if (!r.cpu) return;
  const std::string row = r.algo + " " + format_size(r.config.size_bytes);
  if (r.cpu->wait_share_per_rank.empty()) {
    const double preempted = r.cpu->preemptions_per_call_max.value_or(0);
    if (r.cpu->preemptions_per_call_max && (!max_preemptions_ || preempted > max_preemptions_->second))
      max_preemptions_ = {row, preempted};
    return;
  }
  const double share = r.cpu->wait_share_max().value_or(0);
  if (!max_wait_ || share > max_wait_->second) max_wait_ = {row, share};
  if (share > kHostBoundWaitShare) host_bound_.push_back({row, share});
}

// "# CPU wait : up to 3% of a call (omni 32M): the host kept up (below 10%)",
// or the HOST-BOUND rows with their shares.
void TableReporter::print_cpu_wait() {
  char text[200];
  if (!max_wait_ && max_preemptions_) {
    std::snprintf(text, sizeof(text),
                  "not measured (this kernel gives no /proc schedstat); the busiest rank was preempted up to %.1f "
                  "times per call (%s)",
                  max_preemptions_->second, max_preemptions_->first.c_str());
    print_wrapped(out_, "# CPU wait             : ", text);
    return;
  }
  if (!max_wait_) return;
  if (host_bound_.empty()) {
    std::snprintf(text, sizeof(text), "up to %.0f%% of a call (%s): the host kept up (below %.0f%%)",
                  100 * max_wait_->second, max_wait_->first.c_str(), 100 * kHostBoundWaitShare);
    print_wrapped(out_, "# CPU wait             : ", text);
    return;
  }
  std::snprintf(text, sizeof(text),
                "HOST-BOUND: in these rows the ranks waited for a CPU past %.0f%% of the call, so they measured the "
                "host, not the network:",
                100 * kHostBoundWaitShare);
  std::string list = text;
  for (const auto& [row, share] : host_bound_) {
    std::snprintf(text, sizeof(text), " %s %.0f%%,", row.c_str(), 100 * share);
    list += text;
  }
  list.pop_back();
  print_wrapped(out_, "# CPU wait             : ", list);
}

// "# TCP retransmits      : tree 4M 212/call, ...": packets the emulated
// links dropped (a switch port under incast), which cost the call timeouts
// and halved windows; "none" when every counted row had none.
void TableReporter::print_retransmits() {
  if (!link_counted_) return;
  if (retransmitted_.empty()) {
    print_wrapped(out_, "# TCP retransmits      : ", "none (the emulated links dropped no packet)");
    return;
  }
  std::string list;
  for (const auto& [row, per_call] : retransmitted_) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), "%s%s %.3g/call", list.empty() ? "" : ", ", row.c_str(), per_call);
    list += buf;
  }
  list += " (segments, all ranks: the emulated links dropped packets, at switch ports under incast)";
  print_wrapped(out_, "# TCP retransmits      : ", list);
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
  print_wrapped(out_, "# Link set-up          : ", list + " (max over ranks)");
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
    std::fprintf(out_, "%-22s : %s (%s)\n", label.c_str(), format_ratio(low->vs->speedup).c_str(),
                 low->vs->algo.c_str());
    return;
  }
  std::fprintf(out_, "%-22s : %s to %s over %zu sizes (lowest: %s vs %s at %s)%s\n", label.c_str(),
               format_ratio(low->vs->speedup).c_str(), format_ratio(high->vs->speedup).c_str(),
               headlines_.size() - without, format_ratio(low->vs->speedup).c_str(), low->vs->algo.c_str(),
               format_size(low->size_bytes).c_str(), without ? "; some sizes had no dense algorithm" : "");
}

Status TableReporter::finish() {
  // The headline first: the first line under the table.
  print_headline();
  if (unchecked_rows_ == rows_ && rows_ > 0)
    std::fprintf(out_, "# Out of bounds values : unchecked (-c 0)\n");
  else
    std::fprintf(out_, "# Out of bounds values : %d %s%s\n", wrong_rows_, wrong_rows_ ? "FAILED" : "OK",
                 unchecked_rows_ ? " (some rows unchecked)" : "");
  print_busbw();
  print_setup();
  print_cpu_wait();
  print_retransmits();
  if (resources_) {
    const std::string line = resources_footer(*resources_);
    print_wrapped(out_, "# ", line.substr(line.rfind("# ", 0) == 0 ? 2 : 0));
  }
  return flushed(out_);
}

}  // namespace omnib
