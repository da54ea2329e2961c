#include "tools/compare/result_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace omnib {

using nlohmann::json;

Result<ResultFile> load_result_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return usage_error("cannot read result file '" + path + "': " + std::strerror(errno) +
                       " (write one with 'omni-bench allreduce -J " + path + "')");
  }
  std::stringstream text;
  text << in.rdbuf();
  json doc;
  try {
    doc = json::parse(text.str());
  } catch (const json::parse_error& e) {
    return usage_error("'" + path + "' is not valid JSON (" + e.what() +
                       "): was the run interrupted while writing it? Regenerate it with omni-bench allreduce -J");
  }
  if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array())
    return usage_error("'" + path + "' is not an omni-bench result file: it has no \"results\" array");
  if (!doc.contains("schema_version") || !doc["schema_version"].is_number_integer())
    return usage_error("'" + path + "' has no integer \"schema_version\": it was not written by omni-bench");

  ResultFile file;
  file.path = path;
  file.schema_version = doc["schema_version"].get<int>();
  file.command_line = doc.value("command_line", "");
  if (doc.contains("environment") && doc["environment"].is_object()) {
    file.git_revision = doc["environment"].value("git_revision", "");
    file.timestamp = doc["environment"].value("timestamp", "");
  }
  size_t index = 0;
  for (const auto& entry : doc["results"]) {
    try {
      file.records.push_back(record_from_json(entry));
    } catch (const json::exception& e) {
      return usage_error("'" + path + "': result " + std::to_string(index) + " has a field of the wrong type (" +
                         e.what() + ")");
    }
    ++index;
  }
  return file;
}

}  // namespace omnib
