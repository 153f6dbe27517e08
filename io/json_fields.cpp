#include "io/json_fields.h"

#include <cmath>

#include "base/error.h"

namespace heed::io {
namespace {

// The value as the error shows it: short, since a corrupt file can hold anything.
std::string shown(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

[[noreturn]] void wrong(const nlohmann::json& value, std::string_view where, std::string_view field,
                        std::string_view wanted) {
  fail("{}: field '{}' must be {}, not {}", where, field, wanted, shown(value));
}

// A float that is a whole number inside [low, high): what an integer field may also be
// written as (Python's json writes 1e3 for some integers).
bool whole_in(double v, double low, double high) {
  return std::isfinite(v) && v == std::floor(v) && v >= low && v < high;
}

}  // namespace

int64_t json_to_int64(const nlohmann::json& value, std::string_view where, std::string_view field) {
  if (value.is_number_unsigned()) {
    const uint64_t v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(INT64_MAX)) wrong(value, where, field, "a 64-bit integer");
    return static_cast<int64_t>(v);
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_float() && whole_in(value.get<double>(), -0x1p63, 0x1p63)) {
    return static_cast<int64_t>(value.get<double>());
  }
  wrong(value, where, field, "an integer");
}

uint64_t json_to_uint64(const nlohmann::json& value, std::string_view where,
                        std::string_view field) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  // A JSON value built from a signed C++ integer is stored signed whatever its value.
  if (value.is_number_integer() && value.get<int64_t>() >= 0) return value.get<uint64_t>();
  if (value.is_number_float() && whole_in(value.get<double>(), 0.0, 0x1p64)) {
    return static_cast<uint64_t>(value.get<double>());
  }
  wrong(value, where, field, "a non-negative integer");
}

JsonFields::JsonFields(const nlohmann::json& object, std::string where, std::string prefix)
    : object_(object), where_(std::move(where)), prefix_(std::move(prefix)) {
  if (!object_.is_object()) {
    const std::string what =
        prefix_.empty() ? "the file" : "field '" + prefix_.substr(0, prefix_.size() - 1) + "'";
    fail("{}: {} must be a JSON object, not {}", where_, what, shown(object_));
  }
}

bool JsonFields::has(std::string_view key) const {
  const auto it = object_.find(key);
  return it != object_.end() && !it->is_null();
}

const nlohmann::json& JsonFields::at(std::string_view key) const {
  const auto it = object_.find(key);
  HEED_CHECK(it != object_.end() && !it->is_null(), "{}: field '{}' is missing", where_, name(key));
  return *it;
}

int64_t JsonFields::int64(std::string_view key) const {
  return json_to_int64(at(key), where_, name(key));
}

uint64_t JsonFields::uint64(std::string_view key) const {
  return json_to_uint64(at(key), where_, name(key));
}

double JsonFields::number(std::string_view key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_number()) wrong(v, where_, name(key), "a number");
  return v.get<double>();
}

bool JsonFields::boolean(std::string_view key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_boolean()) wrong(v, where_, name(key), "true or false");
  return v.get<bool>();
}

std::string JsonFields::string(std::string_view key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_string()) wrong(v, where_, name(key), "a string");
  return v.get<std::string>();
}

std::vector<double> JsonFields::numbers(std::string_view key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_array()) wrong(v, where_, name(key), "a list of numbers");
  std::vector<double> out;
  for (const nlohmann::json& x : v) {
    if (!x.is_number()) wrong(v, where_, name(key), "a list of numbers");
    out.push_back(x.get<double>());
  }
  return out;
}

JsonFields JsonFields::object(std::string_view key) const {
  return JsonFields(at(key), where_, name(key) + ".");
}

int64_t JsonFields::int64_or(std::string_view key, int64_t fallback) const {
  return has(key) ? int64(key) : fallback;
}

double JsonFields::number_or(std::string_view key, double fallback) const {
  return has(key) ? number(key) : fallback;
}

}  // namespace heed::io
