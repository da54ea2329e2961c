// ip and tc run as root: they are looked up only in the system folders, never
// on the caller's PATH, and no call can hang the launcher.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/cli_runner.h"
#include "tools/net/command_runner.h"

namespace omnib {
namespace {

using std::chrono::milliseconds;

// Sets PATH and the working folder for one test and puts them back.
class PathOverride {
 public:
  PathOverride(const std::string& path, const std::string& cwd) : cwd_(std::filesystem::current_path()) {
    const char* old = std::getenv("PATH");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("PATH", path.c_str(), 1);
    std::filesystem::current_path(cwd);
  }
  ~PathOverride() {
    if (had_) setenv("PATH", old_.c_str(), 1);
    else unsetenv("PATH");
    std::filesystem::current_path(cwd_);
  }

 private:
  std::filesystem::path cwd_;
  bool had_ = false;
  std::string old_;
};

// An executable script at dir/name that leaves `marker` behind when run.
void plant_tool(const std::string& dir, const std::string& name, const std::string& marker) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << "#!/bin/sh\ntouch '" << marker << "'\n";
  chmod(path.c_str(), 0755);
}

TEST(CommandRunner, ToolsOnTheCallersPathAreIgnored) {
  const std::string dir = testing::temp_path("planted_tools");
  std::filesystem::create_directories(dir);
  const std::string marker = dir + "/ran";
  plant_tool(dir, "omnib-planted-tool", marker);
  plant_tool(dir, "sh", marker);
  PathOverride path(dir + ":.", dir);  // '.' on PATH, too

  EXPECT_EQ(find_tool("omnib-planted-tool"), "");
  const std::string sh = find_tool("sh");
  EXPECT_NE(sh, "");
  EXPECT_NE(sh.rfind(dir, 0), 0u) << sh;
  auto r = run_command({"omnib-planted-tool"});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_NE(r.status().message().find("/usr/sbin, /sbin, /usr/bin or /bin"), std::string::npos);
  ASSERT_TRUE(run_command({"sh", "-c", "true"}).is_ok());
  EXPECT_FALSE(std::filesystem::exists(marker)) << "a planted tool ran";
}

TEST(CommandRunner, OutputAndExitCodeComeBack) {
  auto r = run_command({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r.value().exit_code, 3);
  EXPECT_EQ(r.value().out, "out\n");
  EXPECT_EQ(r.value().err, "err\n");
}

TEST(CommandRunner, AHungCommandIsKilledAtItsTimeout) {
  const auto start = std::chrono::steady_clock::now();
  auto r = run_command({"sh", "-c", "sleep 30"}, milliseconds(300));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Code::kTimeout);
  EXPECT_NE(r.status().message().find("'sh -c sleep 30' did not finish within 0.3 s"), std::string::npos)
      << r.status().message();
  EXPECT_LT(seconds, 5);
}

TEST(CommandRunner, AChildThatKeepsTheOutputOpenDoesNotHangTheCaller) {
  // The tool exits at once but leaves a process holding its stdout.
  const auto start = std::chrono::steady_clock::now();
  Status s = run_checked({"sh", "-c", "sleep 30 & exit 0"}, milliseconds(300));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(s.code(), Code::kTimeout) << s.message();
  EXPECT_LT(seconds, 5);
}

}  // namespace
}  // namespace omnib
