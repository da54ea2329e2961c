#include "tools/report/table_rows.h"

#include "tools/common/size_parse.h"

namespace omnib {
namespace {

constexpr size_t kWidth = 120;

std::string bytes_or_na(std::optional<double> b) { return b ? format_bytes(*b) : "n/a"; }

// CPU time per wire byte in nanoseconds, or "-" when the backend counts no bytes.
std::string cpu_per_byte(const ResultRecord& r) {
  if (!r.cpu || !r.cpu->ns_per_wire_byte) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", *r.cpu->ns_per_wire_byte);
  return buf;
}

// This row's time / the first algorithm's: above 1, the first is faster.
std::string vs_first(const ResultRecord& r, const ResultRecord* first) {
  if (!first || first->time_us.median <= 0) return "-";
  return format_ratio(r.time_us.median / first->time_us.median);
}

// The fastest dense algorithm's time / this sparse row's: above 1, this row
// beats every dense algorithm. Dense rows: "-".
std::string vs_dense(const ResultRecord& r) {
  if (r.dense || !r.vs_best_dense) return "-";
  return format_ratio(r.vs_best_dense->speedup);
}

// "0", "1234", or "off" (-c 0): an unchecked row never reads as correct.
std::string wrong_text(const ResultRecord& r) { return r.checked ? std::to_string(r.wrong_elements) : "off"; }

std::string limit_share(const ResultRecord& r) {
  if (!r.link_limit) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", 100 * r.link_limit->of_limit);
  return buf;
}

}  // namespace

std::string format_ratio(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fx", x);
  return buf;
}

void print_wrapped(std::FILE* out, const std::string& prefix, const std::string& text) {
  std::string line = prefix;
  bool words_on_line = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    if (words_on_line && line.size() + 1 + word.size() > kWidth) {
      std::fprintf(out, "%s\n", line.c_str());
      line = "#     ";
      words_on_line = false;
    }
    if (words_on_line) line += ' ';
    line += word;
    words_on_line = true;
  }
  std::fprintf(out, "%s\n", line.c_str());
}

void print_table_legend(std::FILE* out, const TableLayout& layout) {
  std::string legend =
      "time = median per iteration, max over ranks; busbw = algbw*2(n-1)/n (the dense convention); wire = bytes "
      "the busiest rank sent per iteration, model = the analytic bytes; cpu/B = CPU time of all ranks per wire "
      "byte; vs 1st = this row's time / the first algorithm's (above 1: the first is faster); vs dense = the "
      "fastest dense algorithm's time / this sparse row's (above 1: it beats every dense algorithm); #wrong = "
      "wrong elements in checked calls (off: -c 0); every call's output is poisoned, then checked.";
  if (!layout.wide)
    legend =
        "per configuration, a line with its size, type and the inputs' densities (of elements, of blocks, "
        "and of the union of every rank's blocks), then a row per algorithm. " +
        legend;
  else
    legend =
        "dens, blkdens, union = the inputs' density of elements, of blocks, and of the union of every rank's "
        "blocks; p99 and algbw too. " +
        legend;
  if (layout.link)
    legend +=
        " link = bytes the busiest rank's link sent per iteration (headers and ACKs included); of limit = "
        "the time the link needs for them at its rate / the median time.";
  print_wrapped(out, "# ", legend);
}

void print_table_header(std::FILE* out, const TableLayout& layout) {
  if (layout.wide) {
    std::fprintf(out, "%12s %11s %6s %-22s %7s %7s %7s %11s %10s %10s %8s %8s %10s %10s %8s %8s %8s %9s", "size(B)",
                 "count", "type", "algo", "dens", "blkdens", "union", "time(us)", "p95(us)", "p99(us)", "algbw",
                 "busbw", "wire/rank", "model", "cpu/B", "vs 1st", "vs dense", "#wrong");
    if (layout.link) std::fprintf(out, " %10s %10s %8s", "link/rank", "limit(us)", "of limit");
    std::fprintf(out, "\n%12s %11s %6s %-22s %7s %7s %7s %11s %10s %10s %8s %8s %10s %10s %8s %8s %8s %9s", "", "", "",
                 "", "", "", "", "median", "", "", "(GB/s)", "(GB/s)", "", "", "(ns)", "", "", "");
    if (layout.link) std::fprintf(out, " %10s %10s %8s", "", "", "");
    std::fputc('\n', out);
    return;
  }
  std::fprintf(out, "%-21s %10s %9s %7s %9s %9s %6s %7s %8s %6s", "algo", "time(us)", "p95(us)", "busbw", "wire/rank",
               "model", "cpu/B", "vs 1st", "vs dense", "#wrong");
  if (layout.link) std::fprintf(out, " %9s %7s", "link/rank", "of lim");
  std::fprintf(out, "\n%-21s %10s %9s %7s %9s %9s %6s %7s %8s %6s", "", "median", "", "(GB/s)", "", "", "(ns)", "", "",
               "");
  if (layout.link) std::fprintf(out, " %9s %7s", "", "");
  std::fputc('\n', out);
}

void print_configuration_line(std::FILE* out, const TableLayout& layout, const ResultRecord& r) {
  if (layout.wide) return;
  std::fprintf(out, "# %s %s: %llu elements, density %.4f, blocks %.4f, union %.4f\n",
               format_size(r.config.size_bytes).c_str(), std::string(dtype_name(r.config.dtype)).c_str(),
               static_cast<unsigned long long>(r.config.count()), r.inputs.element_density, r.inputs.block_density,
               r.inputs.union_block_density);
}

void print_table_row(std::FILE* out, const TableLayout& layout, const ResultRecord& r, const ResultRecord* first) {
  if (layout.wide) {
    std::fprintf(out,
                 "%12llu %11llu %6s %-22s %7.4f %7.4f %7.4f %11.1f %10.1f %10.1f %8.3f %8.3f %10s %10s %8s %8s %8s %9s",
                 static_cast<unsigned long long>(r.config.size_bytes),
                 static_cast<unsigned long long>(r.config.count()), std::string(dtype_name(r.config.dtype)).c_str(),
                 r.algo.c_str(), r.inputs.element_density, r.inputs.block_density, r.inputs.union_block_density,
                 r.time_us.median, r.time_us.p95, r.time_us.p99, r.algbw_GBps, r.busbw_GBps,
                 bytes_or_na(r.wire_sent_per_rank_max).c_str(), format_bytes(r.analytic_sent_per_rank_max).c_str(),
                 cpu_per_byte(r).c_str(), vs_first(r, first).c_str(), vs_dense(r).c_str(), wrong_text(r).c_str());
    if (layout.link) {
      std::fprintf(out, " %10s", bytes_or_na(r.link_sent_per_rank_max).c_str());
      if (r.link_limit)
        std::fprintf(out, " %10.1f %8s", r.link_limit->limit_us, limit_share(r).c_str());
      else
        std::fprintf(out, " %10s %8s", "-", "-");
    }
    std::fputc('\n', out);
    return;
  }
  std::fprintf(out, "%-21s %10.1f %9.1f %7.3f %9s %9s %6s %7s %8s %6s", r.algo.c_str(), r.time_us.median, r.time_us.p95,
               r.busbw_GBps, bytes_or_na(r.wire_sent_per_rank_max).c_str(),
               format_bytes(r.analytic_sent_per_rank_max).c_str(), cpu_per_byte(r).c_str(), vs_first(r, first).c_str(),
               vs_dense(r).c_str(), wrong_text(r).c_str());
  if (layout.link) std::fprintf(out, " %9s %7s", bytes_or_na(r.link_sent_per_rank_max).c_str(), limit_share(r).c_str());
  std::fputc('\n', out);
}

void print_skipped_row(std::FILE* out, const TableLayout& layout, const ResultRecord& r) {
  if (layout.wide) {
    std::fprintf(out, "%12llu %11llu %6s %-22s  skipped: %s\n", static_cast<unsigned long long>(r.config.size_bytes),
                 static_cast<unsigned long long>(r.config.count()), std::string(dtype_name(r.config.dtype)).c_str(),
                 r.algo.c_str(), r.skip_reason.c_str());
    return;
  }
  char name[32];
  std::snprintf(name, sizeof(name), "%-21s ", r.algo.c_str());
  print_wrapped(out, name, "skipped: " + r.skip_reason);
}

}  // namespace omnib
