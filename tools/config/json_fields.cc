#include "tools/config/json_fields.h"

#include <cmath>
#include <limits>

namespace omnib {
namespace {

using nlohmann::json;

Status wrong(const char* name, const char* expected, const json& got) {
  return usage_error(std::string("field '") + name + "': expected " + expected + ", found " +
                     std::string(got.type_name()) + (got.is_primitive() ? " " + got.dump() : ""));
}

Result<const json*> field(const json& j, const char* name) {
  if (!j.is_object()) return usage_error(std::string("field '") + name + "': the enclosing value is not an object");
  auto it = j.find(name);
  if (it == j.end()) return usage_error(std::string("field '") + name + "' is missing");
  return &*it;
}

}  // namespace

Status read_field(const json& j, const char* name, std::string& out) {
  auto f = field(j, name);
  if (!f.is_ok()) return f.status();
  if (!f.value()->is_string()) return wrong(name, "a string", *f.value());
  out = f.value()->get<std::string>();
  return Status::ok();
}

Status read_field(const json& j, const char* name, bool& out) {
  auto f = field(j, name);
  if (!f.is_ok()) return f.status();
  if (!f.value()->is_boolean()) return wrong(name, "true or false", *f.value());
  out = f.value()->get<bool>();
  return Status::ok();
}

Status read_field(const json& j, const char* name, double& out) {
  auto f = field(j, name);
  if (!f.is_ok()) return f.status();
  if (!f.value()->is_number()) return wrong(name, "a number", *f.value());
  out = f.value()->get<double>();
  if (!std::isfinite(out)) return wrong(name, "a finite number", *f.value());
  return Status::ok();
}

Status read_field(const json& j, const char* name, int& out) {
  auto f = field(j, name);
  if (!f.is_ok()) return f.status();
  const json& v = *f.value();
  if (!v.is_number_integer()) return wrong(name, "an integer", v);
  if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int>::max())
                             : (v.get<int64_t>() > std::numeric_limits<int>::max() ||
                                v.get<int64_t>() < std::numeric_limits<int>::min()))
    return wrong(name, "an integer that fits 32 bits", v);
  out = v.get<int>();
  return Status::ok();
}

Status read_field(const json& j, const char* name, uint64_t& out) {
  auto f = field(j, name);
  if (!f.is_ok()) return f.status();
  const json& v = *f.value();
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
    return wrong(name, "a non-negative integer", v);
  out = v.get<uint64_t>();
  return Status::ok();
}

Status read_field(const json& j, const char* name, std::vector<double>& out) {
  auto f = field(j, name);
  if (!f.is_ok()) return f.status();
  const json& v = *f.value();
  if (!v.is_array()) return wrong(name, "an array of numbers", v);
  out.clear();
  out.reserve(v.size());
  for (const auto& x : v) {
    if (!x.is_number() || !std::isfinite(x.get<double>())) return wrong(name, "an array of finite numbers", x);
    out.push_back(x.get<double>());
  }
  return Status::ok();
}

Status read_field(const json& j, const char* name, std::map<std::string, uint64_t>& out) {
  auto f = field(j, name);
  if (!f.is_ok()) return f.status();
  const json& v = *f.value();
  if (!v.is_object()) return wrong(name, "an object of counts", v);
  out.clear();
  for (const auto& [key, x] : v.items()) {
    if (!x.is_number_unsigned()) return wrong(name, "an object of non-negative integer counts", x);
    out[key] = x.get<uint64_t>();
  }
  return Status::ok();
}

Status read_nullable(const json& j, const char* name, std::optional<double>& out) {
  out.reset();
  double v = 0;
  bool present = false;
  OMNIB_RETURN_IF_ERROR(read_optional_field(j, name, v, &present));
  if (present) out = v;
  return Status::ok();
}

Result<const json*> object_field(const json& j, const char* name) {
  auto f = field(j, name);
  if (!f.is_ok()) return f.status();
  if (!f.value()->is_object()) return wrong(name, "an object", *f.value());
  return f.value();
}

Status check_json_depth(std::string_view text) {
  size_t depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return usage_error("nests arrays and objects deeper than " + std::to_string(kMaxJsonDepth) +
                           " levels, as no omni-bench document does");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return Status::ok();
}

nlohmann::json parse_untrusted_json(std::string_view text) {
  if (!check_json_depth(text).is_ok()) return json(json::value_t::discarded);
  return json::parse(text, nullptr, false);
}

}  // namespace omnib
