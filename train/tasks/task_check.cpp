// The config checks that depend on the task: TrainingTask::check.
#include "train/config/config_check.h"
#include "train/tasks/task.h"

namespace heed::train {
namespace {

void check_tokenizer(Checker& c, const RunConfig& config, const TrainingTask& task) {
  const TokenizerConfig& t = config.tokenizer;
  const bool chars = t.type == TokenizerType::kChar;
  c.check(t.type == TokenizerType::kWordPiece || task.accepts_any_tokenizer(), "tokenizer.type",
          "task '{}' needs a wordpiece tokenizer", config.task.name);
  c.check(!t.target_unit || (chars && task.has_targets()), "tokenizer.target_unit",
          "only a char tokenizer of a seq2seq task splits its targets differently");
}

void check_data(Checker& c, const RunConfig& config, const TrainingTask& task) {
  const DataConfig& d = config.data;
  const auto [positions, positions_key] = position_limit(config.model);
  if (task.has_targets()) {
    for (auto [key, value] : {std::pair{"data.max_source_length", d.max_source_length},
                              std::pair{"data.max_target_length", d.max_target_length}}) {
      c.at_least(key, value, 1);
      c.check(value <= positions, key, "{} exceeds {} {}", value, positions_key, positions);
    }
  } else {
    c.at_least("data.max_seq_length", d.max_seq_length, task.min_sequence_length());
    c.check(d.max_seq_length <= positions, "data.max_seq_length", "{} exceeds {} {}",
            d.max_seq_length, positions_key, positions);
  }
  c.check(d.truncation == data::Truncation::kHead || task.chooses_truncation(), "data.truncation",
          "applies to task classification only (a tagged sentence or an LM "
          "window is cut at its end)");
}

}  // namespace

void TrainingTask::check(const RunConfig& config) const {
  Checker c(config.origins);
  const Arch needed = architecture();
  c.check(config.model.arch() == needed, "task", "'{}' needs model.arch {}, got {}",
          config.task.name, to_string(needed), to_string(config.model.arch()));
  check_tokenizer(c, config, *this);
  check_data(c, config, *this);
}

}  // namespace heed::train
