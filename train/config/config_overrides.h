#pragma once
// The YAML tree of a run config before the schema reads it: YAML 1.1's merge keys (`<<: *base`)
// and the `--set key=value` overrides, applied to the tree so that an override is read, checked
// and reported exactly as the file's own keys are.
#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "train/config/config.h"

namespace heed::train {

// Each key an override set (dotted), with where it came from as messages name it: "--set
// TEXT", or a pipeline stage's `set` line.
using OverrideOrigins = std::map<std::string, std::string, std::less<>>;

// Numbers and booleans must be plain scalars: `"32"` in quotes is a string.
bool is_plain_scalar(const YAML::Node& node);

// YAML 1.1's merge key, `<<: *base`: a plain `<<` (a quoted one is an ordinary key).
bool is_merge_key(const YAML::Node& key);

// The mappings a merge key's value names: one mapping, or a list of them, earlier ones first;
// empty if the value is neither.
std::vector<YAML::Node> merged_mappings(const YAML::Node& value);

// Applies the overrides to `root` in order ("optim.lr=3e-4"), naming each by
// checks.override_origins where given. Throws ConfigError for a malformed one.
OverrideOrigins apply_overrides(YAML::Node& root, const std::vector<std::string>& overrides,
                                const ConfigChecks& checks);

}  // namespace heed::train
