#include "tools/report/json_reporter.h"

#include "tools/report/atomic_file.h"

namespace omnib {

JsonReporter::JsonReporter(std::string path, const std::vector<ResultRecord>& existing)
    : path_(std::move(path)), results_(nlohmann::json::array()) {
  for (const auto& r : existing) results_.push_back(to_json(r));
}

Status JsonReporter::begin(const RunContext& context) {
  auto kind = output_kind(path_);
  if (!kind.is_ok()) return kind.status();
  stream_ = kind.value() == OutputKind::kStream;
  context_ = {{"schema_version", kSchemaVersion},
              {"tool", "omni-bench"},
              {"command_line", context.command_line},
              {"identity_fields", identity_fields()},
              {"identity_defaults", omitted_defaults()},
              {"configuration", context.configuration},
              {"environment", context.environment}};
  return flush();
}

Status JsonReporter::add_group(const std::vector<ResultRecord>& group) {
  for (const auto& r : group) results_.push_back(to_json(r));
  return flush();
}

Status JsonReporter::checkpoint(const std::vector<ResultRecord>& in_progress) { return flush(in_progress); }

void JsonReporter::set_resources(const ResourcesReport& resources) { resources_ = to_json(resources); }

Status JsonReporter::finish() { return flush({}, true, true); }

Status JsonReporter::finish_interrupted() { return flush({}, false, true); }

Status JsonReporter::flush(const std::vector<ResultRecord>& in_progress, bool complete, bool last) {
  if (stream_ && !last) return Status::ok();
  nlohmann::json doc = context_;
  doc["complete"] = complete;
  if (resources_) doc["resources"] = *resources_;
  doc["results"] = results_;
  for (const auto& r : in_progress) doc["results"].push_back(to_json(r));
  return write_file_atomically(path_, doc.dump(2) + "\n");
}

}  // namespace omnib
