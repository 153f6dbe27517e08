#include "train/config/yaml_file.h"

#include <yaml-cpp/depthguard.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "train/config/config.h"

namespace heed::train {

YAML::Node parse_yaml_file(const std::string& path) {
  if (std::error_code ec; std::filesystem::is_directory(path, ec)) {
    throw ConfigError(fmt::format("{}: is a directory, not a YAML config file", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(fmt::format("{}: cannot read the config file", path));
  std::stringstream text;
  text << in.rdbuf();
  try {
    return YAML::Load(text.str());
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp stops at a fixed depth with the message "bad file".
    throw ConfigError(fmt::format("{}:{}: invalid YAML: nested more than {} levels deep", path,
                                  e.mark.line + 1, e.depth()));
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}:{}: invalid YAML: {}", path, e.mark.line + 1, e.msg));
  }
}

std::string describe_yaml(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    default:
      return "null";
  }
}

}  // namespace heed::train
