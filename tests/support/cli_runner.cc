#include "tests/support/cli_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "tools/process/library_signals.h"

namespace omnib::testing {

namespace {
// A crash in a test shows to ctest as its signal, not as a library's exit 1
// and a .btr file in the working directory (tools/process/library_signals.h).
const bool kSignalsReleased = (release_signals_taken_by_libraries(), true);
}  // namespace

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string temp_path(const std::string& name) {
  static std::string dir = [] {
    char tmpl[] = "/tmp/omnib-test-XXXXXX";
    return std::string(mkdtemp(tmpl));
  }();
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string prefix = info ? std::string(info->test_suite_name()) + "." + info->name() + "." : "";
  for (auto& c : prefix)
    if (c == '/') c = '_';
  std::string path = dir + "/" + prefix + name;
  unlink(path.c_str());
  return path;
}

std::string omni_bench_binary() {
  // OMNIB_TEST_BINARY: the build was moved (e.g. carried to the GPU machine).
  const char* moved = std::getenv("OMNIB_TEST_BINARY");
  return moved ? moved : OMNIB_BINARY;
}

CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env, int limit_seconds) {
  return run_binary(omni_bench_binary(), args, env, limit_seconds);
}

std::string sabotage_binary() {
  const char* moved = std::getenv("OMNIB_TEST_SABOTAGE_BINARY");
  return moved ? moved : OMNIB_SABOTAGE_BINARY;
}

CliResult run_binary(const std::string& binary_path, const std::vector<std::string>& args,
                     const std::vector<std::string>& env, int limit_seconds) {
  const std::string out_path = temp_path("stdout.txt");
  const std::string err_path = temp_path("stderr.txt");
  // Memory floors (--profile) are kept in the test's folder, never in the
  // user's cache; `env` may name another.
  const std::string floor_cache = temp_path("floor-cache");
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    setenv("OMNIB_FLOOR_CACHE", floor_cache.c_str(), 1);
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv;
    std::string binary = binary_path;
    argv.push_back(binary.data());
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  setpgid(pid, pid);
  CliResult r;
  int status = 0;
  while (true) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      break;
    }
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(limit_seconds)) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.exit_code = -9;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Ranks are in the same process group: make sure none outlives the test.
  kill(-pid, SIGKILL);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

std::string small_result_file() {
  const std::string path = temp_path("small-result.json");
  auto r = run_cli({"allreduce", "--nodes", "1", "--algo", "omni", "-b", "4K", "-e", "4K", "-n", "2", "-w", "0",
                    "-J", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return path;
}

}  // namespace omnib::testing
