#pragma once
// A YAML file as the config readers take it: parse errors, a directory, and nesting too deep
// for yaml-cpp become one-line ConfigErrors naming the file and line.
#include <yaml-cpp/yaml.h>

#include <string>

namespace heed::train {

YAML::Node parse_yaml_file(const std::string& path);

// A node as a message shows it: 'scalar', a list, a mapping or null.
std::string describe_yaml(const YAML::Node& node);

}  // namespace heed::train
