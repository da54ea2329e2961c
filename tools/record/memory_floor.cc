#include "tools/record/memory_floor.h"

#include "tools/common/json_fields.h"

namespace omnib {

using nlohmann::json;

json memory_floor_json(const MemoryFloor& f) {
  return json{{"floor_us", f.floor_us},
              {"source", f.source},
              {"host", f.host},
              {"cpu_model", f.cpu_model},
              {"ranks", f.ranks},
              {"threads_per_rank", f.threads_per_rank},
              {"cpus", f.cpus},
              {"size_bytes", f.size_bytes},
              {"dtype_bytes", f.dtype_bytes},
              {"writes_output", f.writes_output},
              {"repetitions", f.repetitions},
              {"cache_file", f.cache_file}};
}

Result<MemoryFloor> memory_floor_from_json(const json& j) {
  if (!j.is_object()) return usage_error("expected an object");
  MemoryFloor f;
  OMNIB_RETURN_IF_ERROR(read_field(j, "floor_us", f.floor_us));
  OMNIB_RETURN_IF_ERROR(read_field(j, "source", f.source));
  if (f.source != kFloorMeasured && f.source != kFloorFromCache)
    return usage_error("field 'source': '" + f.source + "' is neither '" + kFloorMeasured + "' nor '" +
                       kFloorFromCache + "'");
  OMNIB_RETURN_IF_ERROR(read_field(j, "host", f.host));
  OMNIB_RETURN_IF_ERROR(read_field(j, "cpu_model", f.cpu_model));
  OMNIB_RETURN_IF_ERROR(read_field(j, "ranks", f.ranks));
  OMNIB_RETURN_IF_ERROR(read_field(j, "threads_per_rank", f.threads_per_rank));
  OMNIB_RETURN_IF_ERROR(read_field(j, "cpus", f.cpus));
  OMNIB_RETURN_IF_ERROR(read_field(j, "size_bytes", f.size_bytes));
  OMNIB_RETURN_IF_ERROR(read_field(j, "dtype_bytes", f.dtype_bytes));
  OMNIB_RETURN_IF_ERROR(read_field(j, "writes_output", f.writes_output));
  OMNIB_RETURN_IF_ERROR(read_field(j, "repetitions", f.repetitions));
  OMNIB_RETURN_IF_ERROR(read_field(j, "cache_file", f.cache_file));
  return f;
}

}  // namespace omnib
