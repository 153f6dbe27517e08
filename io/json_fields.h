#pragma once
// Checked reads of the fields of a JSON object that heed wrote and reads back
// (trainer_state.json, a config.json): a missing field, a wrong type or a number that the
// field's type cannot hold is a heed::Error naming the file and the field, never one of
// nlohmann's exceptions (which name neither) nor the undefined behaviour of get<int64_t>()
// on a float out of range.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace heed::io {

// An integer, as a JSON integer must be written: 3 (also 3.0 and 3e2, which are whole
// numbers in range), never 3.5 or 1e300.
int64_t json_to_int64(const nlohmann::json& value, std::string_view where, std::string_view field);
uint64_t json_to_uint64(const nlohmann::json& value, std::string_view where,
                        std::string_view field);

// The fields of one object. `where` names the file ("runs/x/checkpoint-4/trainer_state.json"),
// `prefix` the path of the object inside it ("loader."), so that an error names both.
class JsonFields {
 public:
  // Throws when `object` is not a JSON object. Keeps a reference: `object` must outlive this.
  JsonFields(const nlohmann::json& object, std::string where, std::string prefix = "");

  bool has(std::string_view key) const;
  int64_t int64(std::string_view key) const;
  uint64_t uint64(std::string_view key) const;
  double number(std::string_view key) const;
  bool boolean(std::string_view key) const;
  std::string string(std::string_view key) const;
  std::vector<double> numbers(std::string_view key) const;
  JsonFields object(std::string_view key) const;

  // The optional fields: the fallback when absent (a present field must still be well typed).
  int64_t int64_or(std::string_view key, int64_t fallback) const;
  double number_or(std::string_view key, double fallback) const;

  const std::string& where() const { return where_; }
  const nlohmann::json& json() const { return object_; }

 private:
  const nlohmann::json& at(std::string_view key) const;
  std::string name(std::string_view key) const { return prefix_ + std::string(key); }

  const nlohmann::json& object_;
  std::string where_;
  std::string prefix_;
};

}  // namespace heed::io
