// What a process holds, read from /proc, and the run's "resources" block:
// per role, what grew and by how much, and the footer that says so.
#include "tools/measure/resources_report.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "tools/measure/run_resources.h"

namespace omnib {
namespace {

TEST(ProcessResources, ReadsThisProcess) {
  auto s = read_resources();
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_GT(s.value().rss_bytes, 1u << 20);
  EXPECT_GE(s.value().peak_rss_bytes, s.value().rss_bytes);
  EXPECT_GE(s.value().threads, 1u);
  EXPECT_GE(s.value().fds, 3u);
}

TEST(ProcessResources, SeesADescriptorAndAThreadMore) {
  const ResourceSample before = read_resources().value();
  const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  bool stop = false;
  std::mutex m;
  std::condition_variable cv;
  std::thread t([&] {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return stop; });
  });
  const ResourceSample during = read_resources().value();
  {
    std::lock_guard<std::mutex> lock(m);
    stop = true;
  }
  cv.notify_all();
  t.join();
  close(fd);
  EXPECT_EQ(during.fds, before.fds + 1);
  EXPECT_EQ(during.threads, before.threads + 1);
  EXPECT_EQ(read_resources().value().fds, before.fds);
}

TEST(ProcessResources, ReadsAnotherProcessAndFailsClearlyForAGoneOne) {
  auto parent = read_resources(getppid());
  EXPECT_TRUE(parent.is_ok()) << parent.status().message();
  auto gone = read_resources(0x3fffffff);
  ASSERT_FALSE(gone.is_ok());
  EXPECT_EQ(gone.status().code(), Code::kUnavailable);
}

ProcessResources process(const char* role, int rank, uint64_t rss0, uint64_t rss1, uint64_t fds0 = 10,
                         uint64_t fds1 = 10, uint64_t threads0 = 4, uint64_t threads1 = 4) {
  ProcessResources p;
  p.role = role;
  p.rank = rank;
  p.start = {rss0, rss0, threads0, fds0};
  p.end = {rss1, std::max(rss0, rss1), threads1, fds1};
  p.calls = 1000;
  p.seconds = 2;
  return p;
}

TEST(ResourcesReport, FlatWithinTheAllowance) {
  const auto report = summarize_resources({process(kWorkerRole, 0, 50 << 20, (50 << 20) + 4096),
                                           process(kWorkerRole, 1, 60 << 20, (60 << 20) - 8192),
                                           process(kLauncherRole, -1, 10 << 20, 10 << 20)});
  ASSERT_EQ(report.roles.size(), 2u);
  EXPECT_EQ(report.roles[0].role, kLauncherRole);
  EXPECT_EQ(report.roles[1].processes, 2);
  EXPECT_EQ(report.roles[1].rss_bytes.change, -8192);  // the largest change, by magnitude
  EXPECT_EQ(report.roles[1].rss_bytes.rank, 1);
  EXPECT_EQ(report.roles[1].peak_rss_bytes, uint64_t{60} << 20);
  EXPECT_EQ(report.calls, 1000u);
  EXPECT_TRUE(resource_growth(report).empty());
  EXPECT_EQ(resources_footer(report).rfind("# resources: flat over 1000 calls (launcher rss +0 B, worker rss -8.19 kB", 0),
            0u)
      << resources_footer(report);
}

TEST(ResourcesReport, NamesWhatGrewByRoleWithTheNumbers) {
  const auto report = summarize_resources({process(kWorkerRole, 0, 50 << 20, 50 << 20),
                                           process(kWorkerRole, 3, 50 << 20, 80 << 20),
                                           process(kAggregatorRole, 9, 20 << 20, 20 << 20, 12, 1012),
                                           process(kLauncherRole, -1, 10 << 20, 10 << 20, 7, 7, 2, 3)});
  const auto grew = resource_growth(report);
  ASSERT_EQ(grew.size(), 3u);
  EXPECT_EQ(grew[0], "launcher threads +1 (0.001 threads per call)");
  EXPECT_EQ(grew[1], "worker rss +31.46 MB (31457 B per call, rank 3)");
  EXPECT_EQ(grew[2], "aggregator fds +1000 (1 fds per call, rank 9)");
  const std::string footer = resources_footer(report);
  EXPECT_EQ(footer.rfind("# resources: GREW over 1000 calls: launcher threads +1", 0), 0u) << footer;
  // One byte more than the allowance is growth; the allowance itself is not.
  EXPECT_EQ(resource_growth(summarize_resources({process(kWorkerRole, 0, 0, kRssGrowthAllowance)})).size(), 0u);
  EXPECT_EQ(resource_growth(summarize_resources({process(kWorkerRole, 0, 0, kRssGrowthAllowance + 1)})).size(), 1u);
}

TEST(ResourcesReport, RoundTripsThroughJson) {
  const auto report = summarize_resources({process(kWorkerRole, 0, 50 << 20, 51 << 20),
                                           process(kAggregatorRole, 1, 20 << 20, 20 << 20, 12, 13)},
                                          "a note");
  const auto j = to_json(report);
  EXPECT_EQ(j["flat"], false);
  EXPECT_EQ(j["grew"].size(), 1u);
  EXPECT_EQ(j["roles"]["worker"]["growth"]["rss_bytes"]["per_call"], 1048.576);
  auto back = resources_from_json(j);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(to_json(back.value()), j);
  auto bad = j;
  bad["roles"]["worker"]["growth"]["fds"]["change"] = "many";
  EXPECT_NE(resources_from_json(bad).status().message().find("fds.change"), std::string::npos);
}

TEST(RunResources, CountsCallsFromTheFirstTimedCallAndReportsTheLauncher) {
  RunResources run(0, 1, getppid());
  run.count_call();  // before start(): not counted
  ASSERT_TRUE(run.start().is_ok());
  for (int i = 0; i < 5; ++i) run.count_call();
  auto mine = run.mine();
  ASSERT_TRUE(mine.is_ok()) << mine.status().message();
  EXPECT_EQ(mine.value().calls, 5u);
  EXPECT_EQ(mine.value().role, kWorkerRole);
  run.update({mine.value()});
  EXPECT_EQ(run.report().roles.size(), 1u) << "the launcher is not sampled yet";
  run.sample_launcher();
  const ResourcesReport report = run.report();
  ASSERT_EQ(report.roles.size(), 2u);
  EXPECT_EQ(report.roles[0].role, kLauncherRole);
  EXPECT_EQ(report.calls, 5u);
  EXPECT_TRUE(report.note.empty());
}

TEST(RunResources, ANewSizeStartsAfresh) {
  RunResources run(1, 1, 0);
  ASSERT_TRUE(run.start().is_ok());
  for (int i = 0; i < 5; ++i) run.count_call();
  std::vector<char> touched(8 << 20, 1);  // what a larger size needs
  run.restart();
  run.count_call();  // a warm-up of the new size: not counted
  ASSERT_TRUE(run.start().is_ok());
  run.count_call();
  auto mine = run.mine();
  ASSERT_TRUE(mine.is_ok()) << mine.status().message();
  EXPECT_EQ(mine.value().calls, 1u);
  EXPECT_EQ(mine.value().role, kAggregatorRole);
  EXPECT_LT(std::llabs(static_cast<int64_t>(mine.value().end.rss_bytes) -
                       static_cast<int64_t>(mine.value().start.rss_bytes)),
            int64_t{4} << 20)
      << "the 8 MiB touched before the restart counted as growth";
  EXPECT_EQ(touched[123], 1);
}

TEST(RunResources, WithoutALauncherTheNoteSaysWhoServesTheStore) {
  RunResources run(0, 1, 0);
  ASSERT_TRUE(run.start().is_ok());
  run.update({run.mine().value()});
  const ResourcesReport report = run.report();
  ASSERT_EQ(report.roles.size(), 1u);
  EXPECT_NE(report.note.find("rank 0 serves the store"), std::string::npos);
}

}  // namespace
}  // namespace omnib
