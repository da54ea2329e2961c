#include "tools/plot_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/status.h"
#include "tools/compare/result_file.h"
#include "tools/process/child_process.h"

namespace omnib {
namespace {

constexpr const char* kScript = "omni_plot.py";
constexpr const char* kSystemPython = "/usr/bin/python3";

int fail(Code code, const std::string& message) {
  std::fprintf(stderr, "omni-bench plot: %s\n", message.c_str());
  return exit_code(code);
}

bool has_matplotlib(const std::string& python) {
  ChildSpec probe;
  probe.argv = {python, "-c", "import matplotlib"};
  probe.discard_output = true;
  return run_child(probe) == 0;
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

// One document of the current schema holding the records of every input, whatever their
// schema (older files load with the fields they lack at their defaults), so
// that the script reads the identity fields from the file alone.
Result<std::string> write_combined(const std::vector<std::string>& inputs) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& path : inputs) {
    auto file = load_result_file(path);
    if (!file.is_ok()) return file.status();
    for (const auto& r : file.value().records) results.push_back(to_json(r));
    if (!file.value().defaulted.empty()) {
      std::string fields;
      for (const auto& d : file.value().defaulted) fields += (fields.empty() ? "" : ", ") + d;
      std::fprintf(stderr, "omni-bench plot: '%s' has schema_version %d; these fields took their defaults: %s\n",
                   path.c_str(), file.value().schema_version, fields.c_str());
    }
  }
  const nlohmann::json doc = {{"schema_version", kSchemaVersion},
                              {"tool", "omni-bench plot"},
                              {"identity_fields", identity_fields()},
                              {"identity_defaults", omitted_defaults()},
                              {"results", results}};
  std::string path = (std::filesystem::temp_directory_path() / "omni-bench-plot-XXXXXX").string();
  const int fd = mkstemp(path.data());
  // A full or unwritable temporary folder is the user's to fix (exit 2).
  const std::string fix = " (is the folder full or not writable? set TMPDIR to another)";
  if (fd < 0)
    return usage_error("cannot create a temporary file for the plot in " + path + ": " + std::strerror(errno) + fix);
  const std::string text = doc.dump();
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int err = errno;
  close(fd);
  if (!written) {
    unlink(path.c_str());
    return usage_error("cannot write the plot's temporary file " + path + ": " + std::strerror(err) + fix);
  }
  return path;
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
  auto combined = write_combined(o.inputs);
  if (!combined.is_ok()) return fail(combined.status().code(), combined.status().message());
  ChildSpec plot;
  plot.argv = {python, script, combined.value(), "-o", o.out_dir};
  const int rc = run_child(plot);
  unlink(combined.value().c_str());
  if (rc == 127) return fail(Code::kUnavailable, "could not start " + python);
  return rc;
}

}  // namespace omnib
