// What a process holds, read from /proc, the series of samples a process
// keeps per size, and the run's "resources" block: per role, what it held,
// the verdict of every size, and the footer that says so.
#include "tools/measure/resources_report.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "tools/measure/resource_series.h"
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

constexpr uint64_t kRounds = 20;

// A process whose memory moves evenly from rss0 after its first timed round
// to rss1 after its last, and whose threads and descriptors are threads1
// and fds1 at the end.
ProcessResources process(const char* role, int rank, uint64_t rss0, uint64_t rss1, uint64_t fds0 = 10,
                         uint64_t fds1 = 10, uint64_t threads0 = 4, uint64_t threads1 = 4) {
  ProcessResources p;
  p.role = role;
  p.rank = rank;
  p.start = {rss0, rss0, threads0, fds0};
  p.end = {rss1, std::max(rss0, rss1), threads1, fds1};
  p.calls = 1000;
  p.seconds = 2;
  p.rounds = kRounds;
  const double step = (static_cast<double>(rss1) - static_cast<double>(rss0)) / (kRounds - 1);
  for (uint64_t r = 0; r < kRounds; ++r)
    p.series.push_back({r, static_cast<uint64_t>(static_cast<double>(rss0) + step * static_cast<double>(r)),
                        threads0, fds0});
  return p;
}

ResourcesReport summarize(std::vector<ProcessResources> processes, std::string note = "") {
  return summarize_resources({SizeResources{4096, std::move(processes), 0}}, std::move(note));
}

TEST(ResourcesReport, SummarizesEachRoleAndJudgesTheTrend) {
  const auto report = summarize({process(kWorkerRole, 0, 50 << 20, (50 << 20) + 2048),
                                 process(kWorkerRole, 1, 60 << 20, (60 << 20) - 8192),
                                 process(kLauncherRole, -1, 10 << 20, 10 << 20)});
  ASSERT_EQ(report.roles.size(), 2u);
  EXPECT_EQ(report.roles[0].role, kLauncherRole);
  EXPECT_EQ(report.roles[1].processes, 2);
  EXPECT_EQ(report.roles[1].rss_bytes.change, -8192);  // the largest change, by magnitude
  EXPECT_EQ(report.roles[1].rss_bytes.rank, 1);
  EXPECT_EQ(report.roles[1].peak_rss_bytes, uint64_t{60} << 20);
  EXPECT_EQ(report.calls, 1000u);
  EXPECT_EQ(report.verdict.verdict, ResourceVerdict::kFlat);
  // 2 KiB over 19 rounds: a sure trend, but below kMinRssSlope per call.
  EXPECT_EQ(resources_footer(report),
            "# resources: flat over 20 calls (steepest rss trend worker +108 B per call, 99.9% within +108 B to "
            "+108 B (rank 0, size 4K); threads and descriptors steady)");
}

TEST(ResourcesReport, NamesWhatGrewByRoleWithTheNumbers) {
  const auto report = summarize({process(kWorkerRole, 0, 50 << 20, 50 << 20),
                                 process(kWorkerRole, 3, 50 << 20, 80 << 20),
                                 process(kAggregatorRole, 9, 20 << 20, 20 << 20, 12, 1012),
                                 process(kLauncherRole, -1, 10 << 20, 10 << 20, 7, 7, 2, 3)});
  const auto& grew = report.verdict.grew;
  ASSERT_EQ(grew.size(), 3u);
  EXPECT_EQ(grew[0], "launcher threads +1 over 20 calls (size 4K)");
  EXPECT_EQ(grew[1], "worker rss +1.66 MB per call over 20 calls (+33.11 MB; rank 3, size 4K)");
  EXPECT_EQ(grew[2], "aggregator fds +1000 over 20 calls (rank 9, size 4K)");
  EXPECT_EQ(resources_footer(report).rfind("# resources: GREW: launcher threads +1", 0), 0u)
      << resources_footer(report);
}

TEST(ResourcesReport, RoundTripsThroughJson) {
  const auto report = summarize({process(kWorkerRole, 0, 50 << 20, 51 << 20),
                                 process(kAggregatorRole, 1, 20 << 20, 20 << 20, 12, 13)},
                                "a note");
  const auto j = to_json(report);
  EXPECT_EQ(j["flat"], false);
  EXPECT_EQ(j["verdict"], "grew");
  EXPECT_EQ(j["grew"].size(), 2u);
  EXPECT_EQ(j["sizes"][0]["calls"], kRounds);
  EXPECT_EQ(j["sizes"][0]["rss"]["rank"], 0);
  EXPECT_EQ(j["roles"]["worker"]["growth"]["rss_bytes"]["per_call"], 1048.576);
  auto back = resources_from_json(j);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(to_json(back.value()), j);
  auto bad = j;
  bad["roles"]["worker"]["growth"]["fds"]["change"] = "many";
  EXPECT_NE(resources_from_json(bad).status().message().find("fds.change"), std::string::npos);
  bad = j;
  bad["sizes"][0]["verdict"] = "maybe";
  EXPECT_NE(resources_from_json(bad).status().message().find("'maybe' is not flat, grew or too_short"),
            std::string::npos)
      << resources_from_json(bad).status().message();
  bad = j;
  bad["verdict"] = "flat";
  EXPECT_NE(resources_from_json(bad).status().message().find("its sizes say 'grew'"), std::string::npos);
}

TEST(ResourcesReport, ReadsABlockOfAnOlderFile) {
  // Before the trend verdict: flat and grew from end minus start, no sizes.
  auto j = to_json(summarize({process(kWorkerRole, 0, 50 << 20, 50 << 20)}));
  for (const char* added : {"verdict", "min_calls", "min_rss_slope_bytes", "sizes"}) j.erase(added);
  j["flat"] = false;
  j["grew"] = {"worker rss -5.71 MB (-57100 B per call, rank 0)"};
  auto back = resources_from_json(j);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back.value().verdict.verdict, ResourceVerdict::kGrew);
  EXPECT_TRUE(back.value().verdict.sizes.empty());
  ASSERT_EQ(back.value().verdict.grew.size(), 1u);
}

TEST(ResourceSeries, StaysEvenlySpacedAndBounded) {
  ResourceSeries series;
  uint64_t reads = 0;
  for (uint64_t r = 0; r < 100000; ++r)
    if (series.wants(r)) {
      ++reads;
      series.add(r, {r, r, 4, 10});
    }
  const auto& points = series.points();
  ASSERT_GE(points.size(), kMaxSeriesPoints / 2);
  ASSERT_LT(points.size(), kMaxSeriesPoints);
  EXPECT_EQ(points[0].round, 0u);
  for (size_t i = 1; i < points.size(); ++i)
    EXPECT_EQ(points[i].round - points[i - 1].round, points[1].round) << i;
  EXPECT_LT(reads, 1000u) << "a hundred thousand rounds read /proc " << reads << " times";
}

TEST(RunResources, CountsTimedCallsAndRoundsFromTheFirstTimedCallAndReportsTheLauncher) {
  RunResources run(0, 1, getppid());
  run.restart(4096);
  run.count_call();  // before start(): not counted
  ASSERT_TRUE(run.after_timed_round().is_ok());
  ASSERT_TRUE(run.start().is_ok());
  for (int i = 0; i < 5; ++i) {
    run.count_call();
    run.count_call();
    ASSERT_TRUE(run.after_timed_round().is_ok());
  }
  auto mine = run.mine();
  ASSERT_TRUE(mine.is_ok()) << mine.status().message();
  EXPECT_EQ(mine.value().calls, 10u);
  EXPECT_EQ(mine.value().rounds, 5u);
  ASSERT_EQ(mine.value().series.size(), 5u);
  EXPECT_EQ(mine.value().series.back().round, 4u);
  EXPECT_EQ(mine.value().role, kWorkerRole);
  run.update({mine.value()});
  EXPECT_EQ(run.report().roles.size(), 1u) << "the launcher is not sampled yet";
  run.sample_launcher();
  const ResourcesReport report = run.report();
  ASSERT_EQ(report.roles.size(), 2u);
  EXPECT_EQ(report.roles[0].role, kLauncherRole);
  EXPECT_EQ(report.calls, 10u);
  EXPECT_TRUE(report.note.empty());
  EXPECT_EQ(report.verdict.verdict, ResourceVerdict::kTooShort);
  EXPECT_EQ(resources_footer(report), "# resources: too short to judge (5 calls per size; 20 needed)");
}

TEST(RunResources, EachSizeIsJudgedOnItsOwn) {
  RunResources run(1, 1, 0);
  auto measure = [&run](uint64_t size) {
    run.restart(size);
    ASSERT_TRUE(run.start().is_ok());
    for (int i = 0; i < 20; ++i) {
      run.count_call();
      ASSERT_TRUE(run.after_timed_round().is_ok());
    }
    auto mine = run.mine();
    ASSERT_TRUE(mine.is_ok()) << mine.status().message();
    EXPECT_EQ(mine.value().role, kAggregatorRole);
    EXPECT_EQ(mine.value().rounds, 20u);
    run.update({mine.value()});
  };
  measure(4096);
  std::vector<char> touched(64 << 20, 1);  // what a larger size needs
  measure(64 << 20);
  const ResourcesReport report = run.report();
  ASSERT_EQ(report.verdict.sizes.size(), 2u);
  EXPECT_EQ(report.verdict.sizes[0].size_bytes, 4096u);
  EXPECT_EQ(report.verdict.sizes[1].size_bytes, uint64_t{64} << 20);
  EXPECT_EQ(report.verdict.verdict, ResourceVerdict::kFlat) << resources_footer(report);
  EXPECT_EQ(touched[123], 1);
}

TEST(RunResources, WithoutALauncherTheNoteSaysWhoServesTheStore) {
  RunResources run(0, 1, 0);
  run.restart(4096);
  ASSERT_TRUE(run.start().is_ok());
  run.update({run.mine().value()});
  const ResourcesReport report = run.report();
  ASSERT_EQ(report.roles.size(), 1u);
  EXPECT_NE(report.note.find("rank 0 serves the store"), std::string::npos);
}

}  // namespace
}  // namespace omnib
