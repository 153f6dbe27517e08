#pragma once
// Everything a run builds from its config before the first step: the tokenizer (loaded, or
// trained from the corpus), the datasets of each split and their collator, the model
// (fresh, or initialised from a checkpoint), all seeded.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/models/pretrained.h"
#include "train/config/config.h"
#include "train/tasks/task_data.h"

namespace heed::train {

// Loads or trains the tokenizer and reads every split.
TaskData build_task_data(const RunConfig& config, const Log& log);

// `config` with tokenizer.vocab naming the file that build_task_data writes when it builds a
// vocabulary: a data-parallel run's other ranks read rank 0's rather than build their own.
RunConfig with_written_vocabulary(const RunConfig& config);

// The files a run reads its data and tokenizer from, by config key ("data.train",
// "tokenizer.vocab", ...): those that exist once build_task_data has run.
std::vector<std::pair<std::string, std::string>> run_input_files(const RunConfig& config);

// The model the config describes, with vocab and special ids from the tokenizer; from
// config.init_from when given (a new head keeps its initialisation).
std::shared_ptr<nn::PretrainedModel> build_model(const RunConfig& config, const TaskData& data,
                                                 const Log& log);

}  // namespace heed::train
