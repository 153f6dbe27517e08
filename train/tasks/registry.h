#pragma once
// The task objects, one per file of this folder; task_for (task.h) picks among them.
#include "train/tasks/task.h"

namespace heed::train {

const TrainingTask& masked_lm_task();
const TrainingTask& causal_lm_task();
const TrainingTask& sequence_classification_task();
const TrainingTask& token_classification_task();
const TrainingTask& seq2seq_task();

}  // namespace heed::train
