// --device cuda end to end: the engine compacts and scatters on the GPU, the
// NCCL baseline reduces the same device buffers, and host-only baselines are
// listed as skipped. Runs where a GPU is visible; skips elsewhere.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/support/cli_runner.h"
#include "tools/allreduce/device_tensors.h"
#include "tools/trace/trace_file.h"

namespace omnib {
namespace {

using testing::read_json;
using testing::run_cli;
using testing::temp_path;

class DeviceEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = device_tensors_unavailable_reason();
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

void expect_rows(const nlohmann::json& doc, const std::string& algo, bool expect_skipped, size_t expect_rows) {
  size_t rows = 0;
  for (const auto& r : doc["results"]) {
    if (r["algo"] != algo) continue;
    ++rows;
    EXPECT_EQ(r.value("skipped", false), expect_skipped) << r.dump();
    if (expect_skipped) continue;
    EXPECT_EQ(r["config"]["device"], "cuda") << r.dump();
    EXPECT_TRUE(r["correct"].get<bool>()) << r.dump();
    EXPECT_EQ(r["wrong_elements"].get<uint64_t>(), 0u) << r.dump();
  }
  EXPECT_EQ(rows, expect_rows) << algo;
}

TEST_F(DeviceEndToEnd, EngineAndNcclAreCorrectOnDeviceTensors) {
  for (bool in_place : {false, true}) {
    const std::string json = temp_path(in_place ? "inplace.json" : "outofplace.json");
    std::vector<std::string> args{"allreduce", "--device", "cuda", "--algo", "omni,ps,nccl,ring", "--density", "0.1",
                                  "--nodes", "4", "-b", "1000004", "-e", "4000016", "-f", "4", "-n", "2", "-w", "1",
                                  "-J", json};
    if (in_place) args.push_back("--inplace");
    auto r = run_cli(args, {}, 240);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    auto doc = read_json(json);
    for (const char* algo : {"omni", "ps", "nccl"}) expect_rows(doc, algo, false, 2);
    expect_rows(doc, "ring", true, 2);
  }
}

// bf16 and half on device tensors: the kernels move 2-byte elements (16-byte
// accesses at block size 256, single ones at 5000 + 3), NCCL reduces them as
// ncclBfloat16 and ncclFloat16.
TEST_F(DeviceEndToEnd, SixteenBitTypesOnDeviceTensors) {
  for (const char* dtype : {"bf16", "half"}) {
    for (const char* block_size : {"256", "5003"}) {
      SCOPED_TRACE(std::string(dtype) + ", block size " + block_size);
      const std::string json = temp_path("sixteen.json");
      auto r = run_cli({"allreduce", "--device", "cuda", "-d", dtype, "--algo", "omni,ps,nccl", "--density", "0.1",
                        "--nodes", "4", "--block-size", block_size, "-b", "500002", "-e", "500002", "-n", "2", "-w",
                        "1", "-J", json},
                       {}, 240);
      ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
      auto doc = read_json(json);
      for (const char* algo : {"omni", "ps", "nccl"}) expect_rows(doc, algo, false, 1);
    }
  }
}

// --gpu-sync blocking: every worker's host waits sleep; results stay exact
// and record the setting.
TEST_F(DeviceEndToEnd, BlockingGpuSyncIsExactAndRecorded) {
  const std::string json = temp_path("blocking.json");
  auto r = run_cli({"allreduce", "--device", "cuda", "--gpu-sync", "blocking", "--algo", "omni,ps,nccl", "--density",
                    "0.1", "--nodes", "3", "-b", "1000004", "-e", "1000004", "-n", "2", "-w", "1", "-J", json},
                   {}, 240);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto doc = read_json(json);
  for (const char* algo : {"omni", "ps", "nccl"}) expect_rows(doc, algo, false, 1);
  for (const auto& rec : doc["results"]) EXPECT_EQ(rec["config"]["gpu_sync"], "blocking") << rec.dump();
}

TEST_F(DeviceEndToEnd, DedicatedAggregatorsAndOddBlockSizes) {
  const std::string json = temp_path("aggregators.json");
  auto r = run_cli({"allreduce", "--device", "cuda", "--algo", "omni", "--density", "0.3", "--nodes", "3",
                    "--aggregators", "2", "--block-size", "5000", "-b", "999996", "-e", "999996", "-n", "2", "-w", "1",
                    "-J", json},
                   {}, 240);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_rows(read_json(json), "omni", false, 1);
}

// Every batch encoding (issue 19) on device tensors: the compacted blocks are
// sent as bitmaps or index runs from pinned memory, and the results, in
// whatever encoding the shard chose, are expanded before the scatter kernel.
// Scattered non-zeros make the coo policy pick offsets16 where it is smaller
// (docs/wire-format.md).
TEST_F(DeviceEndToEnd, EveryEncodingIsExactOnDeviceTensors) {
  for (const char* workload : {"topk", "scattered"}) {
    for (const char* encoding : {"auto", "blocks", "bitmap", "coo"}) {
      for (bool in_place : {false, true}) {
        SCOPED_TRACE(std::string(workload) + ", " + encoding + (in_place ? ", in place" : ", out of place"));
        const std::string json = temp_path("encodings.json");
        std::vector<std::string> args{"allreduce", "--device", "cuda",     "--algo", "omni",    "--workload",
                                      workload,    "--density", "0.01",   "--nodes", "4",     "--encoding",
                                      encoding,    "-b",        "1000004", "-e",     "1000004", "-n",
                                      "2",         "-w",        "1",       "-J",     json,      "--force"};
        if (in_place) args.push_back("--inplace");
        auto r = run_cli(args, {}, 240);
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
        expect_rows(read_json(json), "omni", false, 1);
      }
    }
  }
}

// A 256 MiB tensor: omni compacts it, ps lists every block through the same
// kernel (a dense send).
TEST_F(DeviceEndToEnd, A256MiBTensorForOmniAndPs) {
  const std::string json = temp_path("large.json");
  auto r = run_cli({"allreduce", "--device", "cuda", "--algo", "omni,ps", "--density", "0.1", "--nodes", "2", "-b",
                    "256M", "-e", "256M", "-n", "2", "-w", "1", "-J", json, "--force"},
                   {}, 300);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* algo : {"omni", "ps"}) expect_rows(read_json(json), algo, false, 1);
}

// The tensor compacts in pieces, each on one of a few streams: the trace has
// a span per piece on a "gpu stream" track, and batches of the first pieces
// are on the wire while later pieces still compact.
TEST_F(DeviceEndToEnd, CompactionOfLaterPiecesOverlapsSending) {
  const std::string trace_path = temp_path("device.trace.json");
  auto r = run_cli({"allreduce", "--device", "cuda", "--algo", "omni", "--density", "1", "--nodes", "2", "-b",
                    "256M", "-e", "256M", "-n", "2", "-w", "1", "--trace", trace_path, "--force"},
                   {}, 300);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto doc = read_trace_file(trace_path);
  ASSERT_TRUE(doc.is_ok()) << doc.status().message();
  size_t overlapping_calls = 0, calls = 0;
  for (const RankTrace& rank : doc.value().ranks) {
    if (!rank.worker) continue;
    for (const auto& call : rank.calls) {
      ++calls;
      std::vector<const SpanRecord*> pieces, sends;
      for (const auto& sp : call.spans) {
        if (sp.name == "compact") pieces.push_back(&sp);
        if (sp.name == "send batch") sends.push_back(&sp);
      }
      ASSERT_GE(pieces.size(), 16u) << "rank " << rank.rank << ": 256 MiB in pieces of 16 MiB";
      for (const SpanRecord* p : pieces) {
        auto name = rank.thread_names.find(p->thread);
        ASSERT_NE(name, rank.thread_names.end());
        EXPECT_NE(name->second.find("gpu stream"), std::string::npos) << name->second;
      }
      const int64_t first_piece_end =
          (*std::min_element(pieces.begin(), pieces.end(), [](auto a, auto b) { return a->end_ns < b->end_ns; }))
              ->end_ns;
      const int64_t last_piece_end =
          (*std::max_element(pieces.begin(), pieces.end(), [](auto a, auto b) { return a->end_ns < b->end_ns; }))
              ->end_ns;
      bool overlap = false;
      for (const SpanRecord* s : sends) overlap |= s->begin_ns >= first_piece_end && s->begin_ns < last_piece_end;
      overlapping_calls += overlap;
    }
  }
  EXPECT_GT(calls, 0u);
  EXPECT_EQ(overlapping_calls, calls) << "a batch left before the last piece finished compacting, in every call";
}

}  // namespace
}  // namespace omnib
