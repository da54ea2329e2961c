// The resources verdict in the result file (docs/json-schema.md,
// "resources"): the run's outcome and one entry per size, written by the
// run and read back, every field type-checked, by the soak check and any
// other reader of the file.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/base/status.h"
#include "tools/measure/resource_verdict.h"

namespace omnib {

// Adds "verdict", "min_calls", "min_rss_slope_bytes" and "sizes" to the
// resources block `block`.
void add_verdict_json(const ResourcesVerdict& v, nlohmann::json& block);

// The verdict of a resources block that has one (files of builds since the
// trend verdict); nullopt for an older block, which has "flat" and "grew" only.
Result<std::optional<ResourcesVerdict>> verdict_from_json(const nlohmann::json& block);

}  // namespace omnib
