#pragma once
// One key's YAML value read into its field, by the field's type: the types a schema row may
// have (config_schema.h). A value of the wrong type is a one-line ConfigError naming the key.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "train/config/config_origins.h"
#include "train/config/config_schema.h"
#include "train/config/yaml_file.h"

namespace heed::train {

// What a leaf reader needs to report a problem.
struct Ctx {
  std::string where;
  std::string key;
  [[noreturn]] void fail_expected(const char* what, const YAML::Node& node) const {
    config_fail(where, "{}: expected {}, got {}", key, what, describe_yaml(node));
  }
};

void read(const YAML::Node& node, int64_t& out, const Ctx& ctx);
void read(const YAML::Node& node, double& out, const Ctx& ctx);
void read(const YAML::Node& node, bool& out, const Ctx& ctx);
void read(const YAML::Node& node, std::string& out, const Ctx& ctx);
void read(const YAML::Node& node, std::array<double, 2>& out, const Ctx& ctx);
void read(const YAML::Node& node, std::vector<std::string>& out, const Ctx& ctx);
void read(const YAML::Node& node, std::vector<int64_t>& out, const Ctx& ctx);
// One of the registered tasks' names (task_names.h).
void read(const YAML::Node& node, TaskName& out, const Ctx& ctx);

// The index in `names` of the node's name; else the error "unknown WHAT 'x'" with a likely
// typo's fix or the names to choose from. Enums and task names fail alike.
size_t read_name(const YAML::Node& node, const std::vector<std::string>& names,
                 std::string_view what, const Ctx& ctx);

template <typename E>
requires std::is_enum_v<E>
void read(const YAML::Node& node, E& out, const Ctx& ctx) {
  constexpr auto& values = EnumInfo<E>::values;
  std::vector<std::string> names;
  for (const auto& [value, name] : values) names.emplace_back(name);
  out = values[read_name(node, names, EnumInfo<E>::what, ctx)].first;
}

template <typename T>
void read(const YAML::Node& node, std::optional<T>& out, const Ctx& ctx) {
  if (node.IsNull()) return void(out.reset());
  T value{};
  read(node, value, ctx);
  out = std::move(value);
}

}  // namespace heed::train
