// The config checks that depend on the task: TrainingTask::check.
#include <algorithm>

#include "train/config/config_check.h"
#include "train/tasks/task.h"

namespace heed::train {
namespace {

void check_tokenizer(Checker& c, const RunConfig& config, const TrainingTask& task) {
  const TokenizerConfig& t = config.tokenizer;
  const bool chars = t.type == TokenizerType::kChar;
  const TokenizerType needed = encoder_tokenizer(config.model.arch());
  c.check(t.type == needed || task.accepts_any_tokenizer(), "tokenizer.type",
          "task '{}' with model.arch {} needs a {} tokenizer", config.task.name,
          to_string(config.model.arch()), to_string(needed));
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

TokenizerType encoder_tokenizer(Arch arch) {
  return arch == Arch::kRoberta ? TokenizerType::kBpe : TokenizerType::kWordPiece;
}

std::string arch_names(const std::vector<Arch>& archs) {
  std::string names;
  for (size_t i = 0; i < archs.size(); ++i) {
    if (i > 0) names += i + 1 == archs.size() ? " or " : ", ";
    names += to_string(archs[i]);
  }
  return names;
}

void TrainingTask::check(const RunConfig& config) const {
  Checker c(config.origins);
  const std::vector<Arch> accepted = architectures();
  c.check(std::ranges::count(accepted, config.model.arch()) > 0, "task",
          "'{}' needs model.arch {}, got {}", config.task.name, arch_names(accepted),
          to_string(config.model.arch()));
  c.check(!config.distill.teacher || has_teacher(), "distill.teacher",
          "task '{}' has no teacher (only task 'distill' does)", config.task.name);
  check_tokenizer(c, config, *this);
  check_data(c, config, *this);
}

}  // namespace heed::train
