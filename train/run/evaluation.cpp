#include "train/run/evaluation.h"

#include <algorithm>
#include <numbers>
#include <vector>

#include "autograd/grad_mode.h"
#include "train/run/metrics.h"

namespace heed::train {

std::map<std::string, double> evaluate(const TrainingTask& task, nn::PretrainedModel& model,
                                       const TaskData& data,
                                       const std::shared_ptr<const data::Dataset>& split,
                                       const RunConfig& c) {
  NoGradGuard no_grad;
  model.eval();
  const size_t batch_size = static_cast<size_t>(c.eval.batch_size.value_or(c.train.batch_size));
  // A batch pads to its longest example, so a whole split is evaluated longest first: the
  // same examples, less padding. (MLM masks other tokens in another order, as randomly.) A
  // part of a split (max_batches) stays the file's first batches, not its longest examples.
  const bool whole_split = c.eval.max_batches == 0 ||
                           static_cast<size_t>(c.eval.max_batches) * batch_size >= split->size();
  data::Loader loader(split, data.collate,
                      {.batch_size = batch_size,
                       .shuffle = false,
                       .group_by_length = whole_split,
                       .seed = static_cast<uint64_t>(c.train.seed)});
  uint64_t batches = loader.batches_per_epoch();
  if (c.eval.max_batches > 0) batches = std::min<uint64_t>(batches, c.eval.max_batches);
  MetricAccumulator metrics(task.scored_classes(data.labels));
  for (uint64_t b = 0; b < batches; ++b) {
    data::Batch batch = loader.batch_at({0, b});
    BatchLoss r =
        task.loss(model, batch, {.label_smoothing = 0.0, .outputs = nn::HeadOutputs::predictions});
    if (r.predictions.defined()) {
      metrics.add_predictions(r.loss.item(), r.targets, r.predictions, r.labels);
    } else {
      metrics.add(r.loss.item(), r.targets, r.logits, r.labels);
    }
  }
  std::map<std::string, double> results = metrics.results();
  // The loss in bits per byte of text: comparable across tokenizers, which cut the same
  // text into different numbers of tokens.
  if (const std::optional<double> per_byte = split->tokens_per_byte();
      per_byte && results.contains("loss")) {
    results["bits_per_byte"] = results["loss"] / std::numbers::ln2 * *per_byte;
  }
  if (!task.decoding_metric_names(c.eval).empty()) {
    // Metrics of what the model outputs by itself, over the same examples.
    const size_t n = std::min<size_t>(split->size(), batches * loader.options().batch_size);
    std::vector<data::Example> examples;
    for (size_t i = 0; i < n; ++i) examples.push_back(split->get(i));
    const std::map<std::string, double> decoded = task.decoding_metrics(
        model, data, examples, c, static_cast<int64_t>(loader.options().batch_size));
    results.insert(decoded.begin(), decoded.end());
  }
  return results;
}

}  // namespace heed::train
