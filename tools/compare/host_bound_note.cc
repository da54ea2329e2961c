#include "tools/compare/host_bound_note.h"

#include <algorithm>
#include <cstdio>

namespace omnib {
namespace {

std::string share_text(const std::optional<double>& share) {
  if (!share) return "not measured";
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%.0f%%", 100 * *share);
  return buf;
}

bool host_bound(const std::optional<double>& share) { return share && *share > kHostBoundWaitShare; }

}  // namespace

std::optional<double> worst_wait_share(const std::vector<const ResultRecord*>& runs) {
  std::optional<double> worst;
  for (const ResultRecord* r : runs) {
    const std::optional<double> share = r->cpu ? r->cpu->wait_share_max() : std::nullopt;
    if (share) worst = std::max(worst.value_or(0), *share);
  }
  return worst;
}

std::string host_bound_note(const std::vector<const ResultRecord*>& baseline,
                            const std::vector<const ResultRecord*>& current) {
  const std::optional<double> base = worst_wait_share(baseline), cur = worst_wait_share(current);
  if (!host_bound(base) && !host_bound(cur)) return "";
  const char* which = host_bound(cur) && host_bound(base) ? "on both sides" : host_bound(cur) ? "now" : "in the baseline";
  return std::string("host-bound ") + which + ": a rank waited for a CPU " +
         share_text(host_bound(cur) ? cur : base) + " of its call (" +
         (host_bound(cur) ? "baseline " + share_text(base) : "now " + share_text(cur)) + ")";
}

}  // namespace omnib
