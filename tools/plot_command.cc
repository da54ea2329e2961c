#include "tools/plot_command.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/status.h"

extern char** environ;

namespace omnib {
namespace {

constexpr const char* kScript = "omni_plot.py";
constexpr const char* kSystemPython = "/usr/bin/python3";

int fail(Code code, const std::string& message) {
  std::fprintf(stderr, "omni-bench plot: %s\n", message.c_str());
  return exit_code(code);
}

// Runs argv[0] (looked up on PATH when it has no '/'); returns its exit code,
// or -1 when it could not be started. `quiet` sends its output to /dev/null.
int run_process(const std::vector<std::string>& args, bool quiet) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

bool has_matplotlib(const std::string& python) {
  return run_process({python, "-c", "import matplotlib"}, true) == 0;
}

// $OMNIB_PYTHON alone when set; else Debian's /usr/bin/python3 (where
// python3-matplotlib installs), else python3 on PATH (may be a pyenv or venv
// build without it). Empty when none has matplotlib.
std::string find_python(std::string& tried) {
  if (const char* forced = std::getenv("OMNIB_PYTHON"); forced && *forced) {
    tried = std::string(forced) + " (from OMNIB_PYTHON)";
    return has_matplotlib(forced) ? forced : "";
  }
  tried = std::string(kSystemPython) + ", python3 on PATH";
  for (const char* candidate : {kSystemPython, "python3"})
    if (has_matplotlib(candidate)) return candidate;
  return "";
}

// $OMNIB_PLOTS_DIR/omni_plot.py, else the source tree's plots/ folder.
std::string find_script() {
  if (const char* dir = std::getenv("OMNIB_PLOTS_DIR"); dir && *dir) return std::string(dir) + "/" + kScript;
  return std::string(OMNIB_PLOTS_DIR) + "/" + kScript;
}

}  // namespace

void bind_plot_options(CLI::App& cmd, PlotOptions& o) {
  cmd.add_option("results", o.inputs, "result files written by `omni-bench allreduce -J`")->required();
  cmd.add_option("-o,--output", o.out_dir, "folder for the PNG and SVG figures (created if missing)")->required();
}

int run_plot_command(const PlotOptions& o) {
  for (const auto& path : o.inputs) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      return fail(Code::kUsage, path + ": no such result file (give files written by `omni-bench allreduce -J`)");
  }
  const std::string script = find_script();
  if (access(script.c_str(), R_OK) != 0)
    return fail(Code::kUnavailable, script + " is missing: set OMNIB_PLOTS_DIR to the folder that holds " + kScript +
                                        " (plots/ in the source tree)");
  std::string tried;
  const std::string python = find_python(tried);
  if (python.empty())
    return fail(Code::kUnavailable, "no Python with matplotlib found (tried " + tried +
                                        "): install python3-matplotlib (apt-get install python3-matplotlib), or set "
                                        "OMNIB_PYTHON to a python3 that has matplotlib");
  std::vector<std::string> args = {python, script};
  args.insert(args.end(), o.inputs.begin(), o.inputs.end());
  args.push_back("-o");
  args.push_back(o.out_dir);
  const int rc = run_process(args, false);
  if (rc < 0) return fail(Code::kUnavailable, "could not start " + python);
  return rc;
}

}  // namespace omnib
