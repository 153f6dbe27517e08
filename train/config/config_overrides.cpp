#include "train/config/config_overrides.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

namespace heed::train {
namespace {

// The value `key` has in `map` through its merge keys only (the mapping's own key left aside);
// an undefined node if none gives it.
YAML::Node inherited_value(const YAML::Node& map, const std::string& key, int depth = 0) {
  if (!map.IsMap() || depth > 100) return YAML::Node(YAML::NodeType::Undefined);
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!is_merge_key(it->first)) continue;
    for (const YAML::Node& source : merged_mappings(it->second)) {
      for (auto field = source.begin(); field != source.end(); ++field) {
        if (field->first.IsScalar() && !is_merge_key(field->first) &&
            field->first.Scalar() == key) {
          return field->second;
        }
      }
      if (YAML::Node deeper = inherited_value(source, key, depth + 1); deeper.IsDefined()) {
        return deeper;
      }
    }
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

// Sets `parts[i..]` under `node` to `value`, creating sections on the way.
void set_path(YAML::Node node, const std::vector<std::string>& parts, size_t i,
              const YAML::Node& value, const std::string& origin) {
  YAML::Node child = node[parts[i]];
  if (i + 1 == parts.size()) {
    child = value;
    return;
  }
  // A section the mapping has only through a merge key (`<<: *base`) is copied in first, so
  // that the override changes one key of it, here only, and the anchor stays as written.
  if (!child.IsDefined()) {
    if (const YAML::Node inherited = inherited_value(node, parts[i]); inherited.IsMap()) {
      child = YAML::Clone(inherited);
    }
  }
  if (!child.IsDefined() || child.IsNull()) {
    child = YAML::Node(YAML::NodeType::Map);
  } else if (!child.IsMap()) {
    const std::string prefix =
        fmt::format("{}", fmt::join(parts.begin(), parts.begin() + i + 1, "."));
    throw ConfigError(fmt::format("{}: '{}' is a value, not a section", origin, prefix));
  }
  set_path(child, parts, i + 1, value, origin);
}

// Applies one "dotted.key=yaml value" to the tree and notes which key it set, and where it came
// from (`origin`, as messages name it: "--set TEXT", or a pipeline stage's line).
void apply_override(YAML::Node& root, const std::string& text, const std::string& origin,
                    OverrideOrigins& overrides) {
  const size_t eq = text.find('=');
  const std::string key = text.substr(0, eq);
  std::vector<std::string> parts;
  std::stringstream stream(key);
  for (std::string part; std::getline(stream, part, '.');) parts.push_back(part);
  const bool valid_key = eq != std::string::npos && !key.empty() && key.back() != '.' &&
                         std::ranges::none_of(parts, &std::string::empty);
  if (!valid_key) {
    throw ConfigError(
        fmt::format("{}: expected key=value with a dotted key, as optim.lr=3e-4", origin));
  }
  YAML::Node value;
  try {
    value = YAML::Load(text.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}: invalid YAML value: {}", origin, e.msg));
  }
  set_path(root, parts, 0, value, origin);
  // A later override of a section replaces what earlier ones set inside it.
  std::erase_if(overrides, [&](const auto& kv) { return kv.first.starts_with(key + "."); });
  overrides[key] = origin;
}

}  // namespace

bool is_plain_scalar(const YAML::Node& node) {
  return node.IsScalar() && node.Tag() == "?";
}

bool is_merge_key(const YAML::Node& key) {
  return is_plain_scalar(key) && key.Scalar() == "<<";
}

std::vector<YAML::Node> merged_mappings(const YAML::Node& value) {
  if (value.IsMap()) return {value};
  std::vector<YAML::Node> maps;
  if (value.IsSequence()) {
    for (const YAML::Node& item : value) {
      if (!item.IsMap()) return {};
      maps.push_back(item);
    }
  }
  return maps;
}

OverrideOrigins apply_overrides(YAML::Node& root, const std::vector<std::string>& overrides,
                                const ConfigChecks& checks) {
  OverrideOrigins origins;
  for (size_t i = 0; i < overrides.size(); ++i) {
    const bool labelled = i < checks.override_origins.size() && !checks.override_origins[i].empty();
    apply_override(root, overrides[i],
                   labelled ? checks.override_origins[i] : "--set " + overrides[i], origins);
  }
  return origins;
}

}  // namespace heed::train
