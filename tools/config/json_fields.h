// Type-checked reads of JSON fields from files and from other ranks: nothing
// read from outside is trusted, and a wrong type is a usage error that names
// the field, never an exception.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/status.h"

namespace omnib {

// Each reads j[name] into `out`. A missing field is an error unless the
// overload with a default is used; a present field of the wrong type (or a
// number out of range) is always an error: "field 'name': expected ...".
Status read_field(const nlohmann::json& j, const char* name, std::string& out);
Status read_field(const nlohmann::json& j, const char* name, bool& out);
Status read_field(const nlohmann::json& j, const char* name, double& out);
Status read_field(const nlohmann::json& j, const char* name, int& out);
Status read_field(const nlohmann::json& j, const char* name, uint64_t& out);
Status read_field(const nlohmann::json& j, const char* name, std::vector<double>& out);
Status read_field(const nlohmann::json& j, const char* name, std::map<std::string, uint64_t>& out);

// Like read_field, but a missing (or null) field leaves `out` unchanged and
// returns false in *present.
template <typename T>
Status read_optional_field(const nlohmann::json& j, const char* name, T& out, bool* present = nullptr) {
  const bool here = j.is_object() && j.contains(name) && !j[name].is_null();
  if (present) *present = here;
  return here ? read_field(j, name, out) : Status::ok();
}

// A nullable number: null or missing gives nullopt.
Status read_nullable(const nlohmann::json& j, const char* name, std::optional<double>& out);

// The object at j[name]; error when it is missing or not an object.
Result<const nlohmann::json*> object_field(const nlohmann::json& j, const char* name);

// Arrays and objects nested deeper than this are in no document omni-bench
// writes or sends. Parsing, copying or printing JSON recurses as deep as it
// nests (a file of 100000 '[' overflows the stack), so text from a file or
// another rank is checked with check_json_depth before it is parsed.
inline constexpr size_t kMaxJsonDepth = 64;

// A usage error when `text` nests arrays and objects deeper than
// kMaxJsonDepth (strings are skipped; the text need not be valid JSON). One
// pass, no allocation.
Status check_json_depth(std::string_view text);

// `text` parsed, or a discarded value (is_discarded()) when it is not JSON or
// nests deeper than kMaxJsonDepth: for values from other ranks, whose
// callers say what they expected.
nlohmann::json parse_untrusted_json(std::string_view text);

}  // namespace omnib
