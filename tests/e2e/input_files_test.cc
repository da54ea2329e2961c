// The JSON readers (trace summarize, compare, plot, sweep --resume) read
// regular files only, and only up to a stated size: a FIFO is refused at
// once (never waited on), a device is never read without end, and a huge
// file is refused by its size, before any of it is read.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/cli_runner.h"
#include "tests/support/special_files.h"
#include "tools/compare/result_file.h"
#include "tools/common/regular_file.h"
#include "tools/trace/trace_file.h"

namespace omnib {
namespace {

using testing::run_cli;
using testing::temp_path;

// Every command that reads a JSON file, reading `path`.
std::vector<std::vector<std::string>> readers_of(const std::string& path, const std::string& good) {
  return {{"trace", "summarize", path},
          {"compare", path, good},
          {"compare", good, path},
          {"sweep", "--resume", "-J", path, "--nodes", "1", "--sizes", "4K", "-n", "1", "-w", "0"}};
}

void expect_refused(const std::vector<std::string>& args, const std::string& message) {
  auto r = run_cli(args, {}, 20);
  EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << args[0] << " " << args[1] << ": " << r.err;
  EXPECT_LT(r.seconds, 10) << args[0] << " " << args[1];
}

TEST(InputFiles, AFifoIsRefusedNotWaitedOn) {
  const std::string fifo = temp_path("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  for (const auto& args : readers_of(fifo, testing::small_result_file()))
    expect_refused(args, fifo + ": is a FIFO (named pipe), not a regular file");
}

TEST(InputFiles, ADeviceIsNeverReadWithoutEnd) {
  const std::string zero = temp_path("zero");
  if (!testing::make_char_device(zero, 1, 5)) GTEST_SKIP() << "mknod needs root";
  for (const auto& args : readers_of(zero, testing::small_result_file()))
    expect_refused(args, zero + ": is a character device, not a regular file");
}

// A 1 GiB file (sparse: it takes no disk) is refused by its size at once,
// not read into memory (twice, as it was) to be found not JSON.
TEST(InputFiles, AHugeFileIsRefusedByItsSize) {
  const std::string huge = temp_path("huge.json");
  const int fd = open(huge.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, off_t{1} << 30), 0);
  close(fd);
  for (const auto& args : readers_of(huge, testing::small_result_file()))
    expect_refused(args, huge + ": is 1.07 GB, more than the 256M omni-bench reads");
}

// A trace whose otherData nests 300000 deep: copying it overflowed the
// stack (trace summarize exited 139). Refused before it is parsed.
TEST(InputFiles, DeepNestingIsRefusedNotParsed) {
  const std::string deep = temp_path("deep.json");
  const size_t n = 300000;
  std::ofstream(deep) << R"({"traceEvents": [], "otherData": {"tool": "omni-bench", "trace_format": 1, "clock": [], )"
                      << R"("x": )" << std::string(n, '[') << std::string(n, ']') << "}}";
  for (const auto& args : readers_of(deep, testing::small_result_file()))
    expect_refused(args, "nests arrays and objects deeper than 64 levels");
}

TEST(InputFiles, TheReadersStateTheirLimits) {
  const std::string path = temp_path("just_over.json");
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(kMaxResultFileBytes + 1)), 0);
  close(fd);
  auto result = load_result_file(path);
  EXPECT_EQ(result.status().code(), Code::kUsage);
  EXPECT_NE(result.status().message().find("more than the 256M"), std::string::npos) << result.status().message();
  auto trace = read_trace_file(path);
  EXPECT_EQ(trace.status().code(), Code::kUsage);
  EXPECT_NE(trace.status().message().find("more than the 256M"), std::string::npos) << trace.status().message();
  // At the limit the text is read (and then found not JSON).
  ASSERT_EQ(truncate(path.c_str(), 16), 0);
  auto text = read_regular_file(path, 16, "file", "hint");
  ASSERT_TRUE(text.is_ok()) << text.status().message();
  EXPECT_EQ(text.value().size(), 16u);
}

}  // namespace
}  // namespace omnib
