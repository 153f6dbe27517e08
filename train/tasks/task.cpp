#include "train/tasks/task.h"

#include "train/run/batch_tensors.h"
#include "train/run/metrics.h"

namespace heed::train {

std::vector<std::string_view> TrainingTask::vocabulary_texts(std::string_view line) const {
  return {line};
}

data::LabelNames TrainingTask::initial_labels(const RunConfig& config,
                                              std::span<const std::string> files) const {
  (void)files;
  return config.data.labels.value_or(data::LabelNames{});
}

BatchLoss TrainingTask::loss(const nn::PretrainedModel& model, const data::Batch& batch,
                             const LossRequest& request) const {
  nn::ModelInputs in = to_model_inputs(batch);
  in.label_smoothing = request.label_smoothing;
  in.head_outputs = request.outputs;
  nn::ModelOutputs out = model.forward(in);
  BatchLoss r;
  r.targets = batch.num_target_tokens;
  r.loss = out.loss;
  r.logits = out.logits;
  r.predictions = out.predictions;
  // A model that picks its labels (masked-LM at labelled rows) returns them aligned with its
  // logits.
  r.labels = out.labels.defined() ? out.labels : in.labels;
  return r;
}

std::vector<std::string> TrainingTask::metric_names(const std::vector<std::string>& scored_classes,
                                                    const EvalConfig& eval) const {
  std::vector<std::string> names = MetricAccumulator(scored_classes).metric_names();
  if (reports_bits_per_byte()) names.emplace_back("bits_per_byte");
  for (std::string& n : decoding_metric_names(eval)) names.push_back(std::move(n));
  return names;
}

std::map<std::string, double> TrainingTask::decoding_metrics(
    const nn::PretrainedModel& model, const TaskData& data, std::span<const data::Example> examples,
    const RunConfig& config, int64_t batch_size) const {
  (void)model, (void)data, (void)examples, (void)config, (void)batch_size;
  return {};
}

std::string TrainingTask::end_of_run_examples(const nn::PretrainedModel& model,
                                              const TaskData& data, const RunConfig& config) const {
  (void)model, (void)data, (void)config;
  return {};
}

}  // namespace heed::train
