#include "train/run/metrics.h"

#include <cmath>

#include "autograd/ops.h"

namespace heed::train {

void MetricAccumulator::add(double mean_loss, int64_t targets, const Tensor& logits,
                            const Tensor& labels) {
  Tensor predicted;
  if (logits.defined() && labels.defined()) {
    predicted = argmax(logits.reshape({-1, logits.size(-1)}), 1);
  }
  add_predictions(mean_loss, targets, predicted, labels);
}

void MetricAccumulator::add_predictions(double mean_loss, int64_t targets,
                                        const Tensor& predicted_ids, const Tensor& labels) {
  if (targets > 0) {
    loss_sum_ += mean_loss * targets;
    targets_ += targets;
  }
  if (!predicted_ids.defined() || !labels.defined()) return;
  std::vector<int64_t> predicted = predicted_ids.reshape({-1}).to_vector<int64_t>();
  std::vector<int64_t> actual = labels.reshape({-1}).to_vector<int64_t>();
  HEED_CHECK(predicted.size() == actual.size(), "metrics: {} predictions for {} labels",
             predicted.size(), actual.size());
  if (!class_names_.empty() && true_positive_.empty()) {
    true_positive_.assign(class_names_.size(), 0);
    predicted_.assign(class_names_.size(), 0);
    actual_.assign(class_names_.size(), 0);
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] == -100) continue;
    ++counted_;
    if (predicted[i] == actual[i]) ++correct_;
    if (!class_names_.empty() && actual[i] < static_cast<int64_t>(class_names_.size()) &&
        predicted[i] < static_cast<int64_t>(class_names_.size())) {
      actual_[actual[i]]++;
      predicted_[predicted[i]]++;
      if (predicted[i] == actual[i]) true_positive_[actual[i]]++;
    }
  }
}

std::vector<std::string> MetricAccumulator::metric_names() const {
  std::vector<std::string> names{"loss", "perplexity", "accuracy"};
  for (const std::string& c : class_names_) {
    for (const char* suffix : {"_precision", "_recall", "_f1"}) names.push_back(c + suffix);
  }
  if (!class_names_.empty()) names.push_back("macro_f1");
  return names;
}

std::map<std::string, double> MetricAccumulator::results() const {
  std::map<std::string, double> r;
  if (targets_ > 0) {
    r["loss"] = loss_sum_ / targets_;
    r["perplexity"] = std::exp(r["loss"]);
  }
  if (counted_ > 0) r["accuracy"] = static_cast<double>(correct_) / counted_;
  if (!true_positive_.empty()) {
    double f1_sum = 0.0;
    for (size_t c = 0; c < class_names_.size(); ++c) {
      const double precision =
          predicted_[c] ? static_cast<double>(true_positive_[c]) / predicted_[c] : 0.0;
      const double recall = actual_[c] ? static_cast<double>(true_positive_[c]) / actual_[c] : 0.0;
      const double f1 =
          precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0.0;
      r[class_names_[c] + "_precision"] = precision;
      r[class_names_[c] + "_recall"] = recall;
      r[class_names_[c] + "_f1"] = f1;
      f1_sum += f1;
    }
    r["macro_f1"] = f1_sum / class_names_.size();
  }
  return r;
}

}  // namespace heed::train
