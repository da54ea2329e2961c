#include "tools/measure/run_resources.h"

namespace omnib {
namespace {

constexpr const char* kLauncherWhat = "the launcher (the store's process): ";

}  // namespace

RunResources::RunResources(int rank, int nodes, int launcher_pid)
    : self_(rank < nodes ? kWorkerRole : kAggregatorRole, rank) {
  if (rank == 0 && launcher_pid > 0) launcher_.emplace(kLauncherRole, -1, launcher_pid);
}

Status RunResources::start() {
  if (self_.started()) return Status::ok();
  OMNIB_RETURN_IF_ERROR(self_.start());
  // A launcher this rank cannot read is left out with a note, never a failure.
  if (launcher_) {
    Status s = launcher_->start();
    if (!s.is_ok()) launcher_problem_ = kLauncherWhat + s.message();
  }
  return Status::ok();
}

void RunResources::restart() {
  self_.reset();
  if (launcher_) launcher_->reset();
  launcher_latest_.reset();
  calls_ = 0;
}

Result<ProcessResources> RunResources::mine() { return self_.report(calls_); }

void RunResources::update(std::vector<ProcessResources> ranks) { ranks_ = std::move(ranks); }

void RunResources::sample_launcher() {
  if (!launcher_ || !launcher_problem_.empty()) return;
  auto launcher = launcher_->report(calls_);
  if (launcher.is_ok()) launcher_latest_ = launcher.take();
  else launcher_problem_ = kLauncherWhat + launcher.status().message();
}

ResourcesReport RunResources::report() const {
  std::vector<ProcessResources> all = ranks_;
  if (launcher_latest_ && launcher_problem_.empty()) all.push_back(*launcher_latest_);
  std::string note = launcher_problem_;
  if (!launcher_) note = "no launcher: rank 0 serves the store (its figures are the first worker's)";
  else if (!launcher_latest_ && note.empty()) note = "the launcher was not sampled";
  return summarize_resources(all, note);
}

}  // namespace omnib
