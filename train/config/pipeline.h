#pragma once
// A pipeline file chains runs: each stage is a run config, and each stage after the first
// starts from the model that the stage before it ended with (its init_from is replaced).
//   pipeline:
//     - configs/bert_mlm_cased128.yaml
//     - configs/bert_mlm_spam.yaml
//     - {config: configs/bert_classify.yaml, set: [train.seed=43]}
#include <optional>
#include <string>
#include <vector>

namespace heed::train {

struct PipelineStage {
  std::string config;                  // the run config's path
  std::vector<std::string> overrides;  // its `set`, as --set takes them
  std::string where;                   // "file:line" of the stage, for messages
};

// The stages of `path` when it is a pipeline file (a mapping whose one key is `pipeline`);
// nullopt when it is a run config. Throws ConfigError naming the file and line of a malformed
// pipeline.
std::optional<std::vector<PipelineStage>> read_pipeline(const std::string& path);

}  // namespace heed::train
