#include <fmt/format.h>

#include "train/config/config_origins.h"
#include "train/config/pipeline.h"
#include "train/config/yaml_file.h"

namespace heed::train {

std::optional<std::vector<PipelineStage>> read_pipeline(const std::string& path) {
  const YAML::Node root = parse_yaml_file(path);
  if (!root.IsMap() || !root["pipeline"]) return std::nullopt;
  const auto where = [&](const YAML::Node& node) {
    return fmt::format("{}:{}", path, node.Mark().line + 1);
  };
  for (const auto& entry : root) {
    if (!entry.first.IsScalar() || entry.first.Scalar() != "pipeline") {
      config_fail(where(entry.first), "unknown key {}: a pipeline file holds `pipeline` only",
                  describe_yaml(entry.first));
    }
  }
  const YAML::Node list = root["pipeline"];
  if (!list.IsSequence() || list.size() == 0) {
    config_fail(where(list), "pipeline: expected a list of stages, got {}", describe_yaml(list));
  }
  std::vector<PipelineStage> stages;
  for (const YAML::Node& item : list) {
    PipelineStage stage{.where = where(item)};
    if (item.IsScalar()) {
      stage.config = item.as<std::string>();
    } else if (item.IsMap()) {
      for (const auto& field : item) {
        const std::string key = field.first.IsScalar() ? field.first.Scalar() : "";
        const YAML::Node& value = field.second;
        if (key == "config" && value.IsScalar()) {
          stage.config = value.as<std::string>();
        } else if (key == "set" && value.IsSequence()) {
          for (const YAML::Node& text : value) {
            if (!text.IsScalar()) {
              config_fail(where(text), "pipeline: `set` takes key=value texts, got {}",
                          describe_yaml(text));
            }
            stage.overrides.push_back(text.as<std::string>());
          }
        } else {
          config_fail(where(field.first),
                      "pipeline: a stage takes `config` (a path) and `set` (a list of "
                      "key=value), got {}: {}",
                      describe_yaml(field.first), describe_yaml(value));
        }
      }
    } else {
      config_fail(stage.where, "pipeline: a stage is a config path or {{config, set}}, got {}",
                  describe_yaml(item));
    }
    if (stage.config.empty()) config_fail(stage.where, "pipeline: the stage names no config");
    stages.push_back(std::move(stage));
  }
  return stages;
}

}  // namespace heed::train
