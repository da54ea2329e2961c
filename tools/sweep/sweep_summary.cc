#include "tools/sweep/sweep_summary.h"

#include <map>

#include "tools/report/table_rows.h"

namespace omnib {
namespace {

std::string ratio(double num, double den) { return num > 0 && den > 0 ? format_ratio(num / den) : "-"; }

std::string timed(const std::string& algo, double us) {
  if (algo.empty()) return "-";
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%s %.1f us", algo.c_str(), us);
  return buf;
}

}  // namespace

void SweepSummary::add(const std::vector<ResultRecord>& records) {
  std::map<std::string, Row> by_config;
  std::vector<std::string> order;
  for (const ResultRecord& r : records) {
    if (r.skipped || r.time_us.median <= 0) continue;
    const std::string key = r.config.key_text();
    if (!by_config.count(key)) {
      order.push_back(key);
      by_config[key].configuration = r.config.label();
    }
    Row& row = by_config[key];
    const double t = r.time_us.median;
    if (r.dense && (row.best_dense.empty() || t < row.dense_us)) row.best_dense = r.algo, row.dense_us = t;
    if (!r.dense && (row.best_sparse.empty() || t < row.sparse_us)) row.best_sparse = r.algo, row.sparse_us = t;
    if (!r.dense && row.subject.empty()) row.subject = r.algo, row.subject_us = t;
  }
  for (const auto& key : order) rows_.push_back(by_config[key]);
}

void SweepSummary::print(std::FILE* out) const {
  if (rows_.empty()) return;
  const std::string subject = rows_.front().subject.empty() ? "omni" : rows_.front().subject;
  std::fprintf(out, "#\n");
  print_wrapped(out, "# sweep summary: ",
                "per configuration, its fastest dense and fastest sparse algorithm (median time), and " + subject +
                    " against each: their time / " + subject + "'s (above 1: " + subject + " is the faster)");
  for (const Row& row : rows_) {
    std::fprintf(out, "# %s\n", row.configuration.c_str());
    std::fprintf(out, "#   best dense %-28s best sparse %-28s %s vs dense %7s  vs sparse %7s\n",
                 timed(row.best_dense, row.dense_us).c_str(), timed(row.best_sparse, row.sparse_us).c_str(),
                 subject.c_str(), ratio(row.dense_us, row.subject_us).c_str(),
                 ratio(row.sparse_us, row.subject_us).c_str());
  }
}

}  // namespace omnib
