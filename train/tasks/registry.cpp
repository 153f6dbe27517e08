#include "train/tasks/registry.h"

namespace heed::train {

const TrainingTask& task_for(Task task) {
  switch (task) {
    case Task::kMlm:
      return masked_lm_task();
    case Task::kClm:
      return causal_lm_task();
    case Task::kClassification:
      return sequence_classification_task();
    case Task::kTokenClassification:
      return token_classification_task();
    case Task::kSeq2Seq:
      return seq2seq_task();
  }
  fail("task: unknown task {}", static_cast<int>(task));
}

}  // namespace heed::train
