#pragma once
// One key's YAML value read into its field, by the field's type: the types a schema row may
// have (config_schema.h). A value of the wrong type is a one-line ConfigError naming the key.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "train/config/config_origins.h"
#include "train/config/config_schema.h"
#include "train/config/did_you_mean.h"
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

template <typename E>
requires std::is_enum_v<E>
void read(const YAML::Node& node, E& out, const Ctx& ctx) {
  constexpr auto& values = EnumInfo<E>::values;
  std::vector<std::string> names;
  for (const auto& [value, name] : values) names.emplace_back(name);
  if (!node.IsScalar()) {
    ctx.fail_expected(fmt::format("one of {}", fmt::join(names, ", ")).c_str(), node);
  }
  for (const auto& [value, name] : values) {
    if (name == node.Scalar()) return void(out = value);
  }
  if (auto suggestion = did_you_mean(node.Scalar(), names)) {
    config_fail(ctx.where, "{}: unknown {} '{}' (did you mean '{}'?)", ctx.key, EnumInfo<E>::what,
                node.Scalar(), *suggestion);
  }
  config_fail(ctx.where, "{}: unknown {} '{}' (expected one of {})", ctx.key, EnumInfo<E>::what,
              node.Scalar(), fmt::join(names, ", "));
}

template <typename T>
void read(const YAML::Node& node, std::optional<T>& out, const Ctx& ctx) {
  if (node.IsNull()) return void(out.reset());
  T value{};
  read(node, value, ctx);
  out = std::move(value);
}

}  // namespace heed::train
