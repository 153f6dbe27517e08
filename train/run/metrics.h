#pragma once
// Evaluation metrics, accumulated batch by batch: the token-weighted mean loss and
// perplexity, accuracy over the targets that count, and per-class precision/recall/F1 for
// classification.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace heed::train {

class MetricAccumulator {
 public:
  explicit MetricAccumulator(std::vector<std::string> class_names = {})
      : class_names_(std::move(class_names)) {}

  // `mean_loss` over `targets` counted targets; `logits` [N, C] and `labels` [N] (-100 =
  // ignore) for accuracy and the confusion counts.
  void add(double mean_loss, int64_t targets, const Tensor& logits, const Tensor& labels);
  // The same from the predicted class ids (i64, the logits' arg max per row), shaped as labels.
  void add_predictions(double mean_loss, int64_t targets, const Tensor& predicted,
                       const Tensor& labels);

  // loss, perplexity, accuracy, and for classes: <name>_precision/_recall/_f1, macro_f1.
  std::map<std::string, double> results() const;
  // Every name results() can report (an evaluation with no counted target reports fewer).
  std::vector<std::string> metric_names() const;
  int64_t targets() const { return targets_; }

 private:
  std::vector<std::string> class_names_;
  double loss_sum_ = 0.0;
  int64_t targets_ = 0;
  int64_t correct_ = 0;
  int64_t counted_ = 0;
  std::vector<int64_t> true_positive_, predicted_, actual_;
};

}  // namespace heed::train
