#include "tools/compare/result_file.h"

#include <algorithm>

#include "tools/config/comma_list.h"
#include "tools/config/json_fields.h"
#include "tools/config/regular_file.h"

namespace omnib {

using nlohmann::json;

namespace {

Status read_header(const json& doc, ResultFile& file) {
  OMNIB_RETURN_IF_ERROR(read_optional_field(doc, "command_line", file.command_line));
  if (doc.contains("environment")) {
    const json& env = doc["environment"];
    if (!env.is_object()) return usage_error("field 'environment': expected an object");
    OMNIB_RETURN_IF_ERROR(read_optional_field(env, "git_revision", file.git_revision).with_context("environment: "));
    OMNIB_RETURN_IF_ERROR(read_optional_field(env, "timestamp", file.timestamp).with_context("environment: "));
  }
  return Status::ok();
}

// A record that ran must have taken time: zero or negative times are a
// broken file, never a measurement to compare.
Status check_times(const ResultRecord& r) {
  if (r.skipped) return Status::ok();
  if (!(r.time_us.median > 0)) return usage_error("algorithm " + r.algo + " ran but its median time is not positive");
  for (double t : r.samples_us)
    if (!(t > 0)) return usage_error("algorithm " + r.algo + " has a non-positive time sample");
  for (const auto& run : r.runs)
    if (!(run.median_us > 0)) return usage_error("algorithm " + r.algo + " has a run with a non-positive median");
  return Status::ok();
}

// The parsed form of a document, or why it is not JSON.
Result<json> parse_json(const std::string& text, const std::string& path) {
  OMNIB_RETURN_IF_ERROR(check_json_depth(text).with_context("'" + path + "' "));
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded())
    return usage_error("'" + path + "' is not valid JSON: was the run interrupted while writing it? Regenerate it "
                       "with omni-bench allreduce -J");
  return doc;
}

Result<ResultFile> result_from_json(const json& doc, const std::string& path) {
  if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array())
    return usage_error("'" + path + "' is not an omni-bench result file: it has no \"results\" array");
  ResultFile file;
  file.path = path;
  Status s = read_field(doc, "schema_version", file.schema_version);
  if (!s.is_ok()) return s.with_context("'" + path + "' was not written by omni-bench: ");
  if (file.schema_version < 1 || file.schema_version > kSchemaVersion)
    return usage_error("'" + path + "' has schema_version " + std::to_string(file.schema_version) +
                       "; this omni-bench reads versions 1 to " + std::to_string(kSchemaVersion) +
                       ": use the omni-bench that wrote it");
  s = read_header(doc, file);
  if (!s.is_ok()) return s.with_context("'" + path + "': ");
  size_t index = 0;
  for (const auto& entry : doc["results"]) {
    std::vector<std::string> defaulted;
    auto r = record_from_json(entry, file.schema_version, &defaulted);
    if (!r.is_ok()) return r.status().with_context("'" + path + "': result " + std::to_string(index) + ": ");
    s = check_times(r.value());
    if (!s.is_ok()) return s.with_context("'" + path + "': result " + std::to_string(index) + ": ");
    for (const auto& d : defaulted)
      if (std::find(file.defaulted.begin(), file.defaulted.end(), d) == file.defaulted.end())
        file.defaulted.push_back(d);
    file.records.push_back(r.take());
    ++index;
  }
  return file;
}

}  // namespace

Result<ResultFile> parse_result_document(const std::string& text, const std::string& path) {
  auto doc = parse_json(text, path);
  if (!doc.is_ok()) return doc.status();
  return result_from_json(doc.value(), path);
}

Result<ResultFile> load_result_file(const std::string& path) {
  auto text = read_regular_file(path, kMaxResultFileBytes, "result file",
                                "write one with 'omni-bench allreduce -J " + path + "'");
  if (!text.is_ok()) return text.status();
  auto doc = parse_json(text.value(), path);
  std::string().swap(text.value());  // the parsed form alone from here on
  if (!doc.is_ok()) return doc.status();
  return result_from_json(doc.value(), path);
}

std::string ResultSide::describe() const {
  if (files.empty()) return "(none)";
  if (files.size() == 1) return files.front().path;
  return files.front().path + " (+" + std::to_string(files.size() - 1) + " more)";
}

Result<ResultSide> load_result_side(const std::string& comma_list) {
  ResultSide side;
  for (const auto& path : split_list(comma_list)) {
    auto f = load_result_file(path);
    if (!f.is_ok()) return f.status();
    side.files.push_back(f.take());
  }
  if (side.files.empty()) return usage_error("no result file named in '" + comma_list + "'");
  return side;
}

}  // namespace omnib
