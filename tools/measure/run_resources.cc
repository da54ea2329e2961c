#include "tools/measure/run_resources.h"

namespace omnib {
namespace {

constexpr const char* kLauncherWhat = "the launcher (the store's process): ";

}  // namespace

RunResources::RunResources(int rank, int nodes, int launcher_pid, uint64_t traced_rounds)
    : self_(rank < nodes ? kWorkerRole : kAggregatorRole, rank), traced_rounds_(traced_rounds) {
  if (rank == 0 && launcher_pid > 0) launcher_.emplace(kLauncherRole, -1, launcher_pid);
}

Status RunResources::start() {
  if (self_.started()) return Status::ok();
  OMNIB_RETURN_IF_ERROR(self_.start());
  // A launcher this rank cannot read is left out with a note, never a failure.
  if (launcher_ && launcher_problem_.empty()) {
    Status s = launcher_->start();
    if (!s.is_ok()) launcher_problem_ = kLauncherWhat + s.message();
  }
  return Status::ok();
}

void RunResources::restart(uint64_t size_bytes) {
  if (!ranks_.empty()) done_.push_back(current());
  ranks_.clear();
  self_.reset();
  if (launcher_) launcher_->reset();
  launcher_latest_.reset();
  self_series_.clear();
  launcher_series_.clear();
  calls_ = 0;
  rounds_ = 0;
  size_bytes_ = size_bytes;
}

Status RunResources::after_timed_round() {
  if (!self_.started()) return Status::ok();
  const uint64_t round = rounds_++;
  if (!self_series_.wants(round)) return Status::ok();
  auto mine = self_.sample();
  if (!mine.is_ok()) return mine.status();
  self_series_.add(round, mine.value());
  if (launcher_ && launcher_problem_.empty()) {
    auto launcher = launcher_->sample();
    if (launcher.is_ok()) launcher_series_.add(round, launcher.value());
    else launcher_problem_ = kLauncherWhat + launcher.status().message();
  }
  return Status::ok();
}

Result<ProcessResources> RunResources::mine() {
  auto p = self_.report(calls_);
  if (!p.is_ok()) return p.status();
  p.value().rounds = rounds_;
  p.value().series = self_series_.points();
  return p;
}

void RunResources::update(std::vector<ProcessResources> ranks) { ranks_ = std::move(ranks); }

void RunResources::sample_launcher() {
  if (!launcher_ || !launcher_problem_.empty()) return;
  auto launcher = launcher_->report(calls_);
  if (!launcher.is_ok()) {
    launcher_problem_ = kLauncherWhat + launcher.status().message();
    return;
  }
  launcher_latest_ = launcher.take();
  launcher_latest_->rounds = rounds_;
  launcher_latest_->series = launcher_series_.points();
}

SizeResources RunResources::current() const {
  SizeResources size{size_bytes_, ranks_, traced_rounds_};
  if (launcher_latest_ && launcher_problem_.empty()) size.processes.push_back(*launcher_latest_);
  return size;
}

ResourcesReport RunResources::report() const {
  std::vector<SizeResources> sizes = done_;
  if (!ranks_.empty()) sizes.push_back(current());
  std::string note = launcher_problem_;
  if (!launcher_) note = "no launcher: rank 0 serves the store (its figures are the first worker's)";
  else if (!launcher_latest_ && note.empty()) note = "the launcher was not sampled";
  return summarize_resources(sizes, note);
}

}  // namespace omnib
