// A label per text (spam or ham) with a BERT, RoBERTa or DistilBERT and a classification head:
// lines of `label<TAB>text`, per-class precision, recall and F1 in evaluation.
#include "data/collators.h"
#include "nn/models/bert.h"
#include "train/tasks/model_configs.h"
#include "train/tasks/registry.h"

namespace heed::train {
namespace {

class SequenceClassificationTask final : public TrainingTask {
 public:
  std::string_view summary() const override { return "one label per text"; }
  std::vector<Arch> architectures() const override {
    return {Arch::kBert, Arch::kRoberta, Arch::kDistilBert};
  }
  bool chooses_truncation() const override { return true; }

  std::vector<std::string_view> vocabulary_texts(std::string_view line) const override {
    std::vector<std::string_view> fields = data::split_tabs(line);
    if (!fields.empty()) fields.erase(fields.begin());  // not the label
    return fields;
  }

  std::shared_ptr<const data::Dataset> read_split(const SplitSource& s,
                                                  data::LabelNames& labels) const override {
    auto set = std::make_shared<data::TextClassificationDataset>(
        s.path, *s.data.tokenizer, static_cast<size_t>(s.config.data.max_seq_length), labels,
        s.config.data.truncation);
    if (labels.empty()) labels = set->labels();
    return set;
  }

  data::CollateFn collator(const RunConfig&, const TaskData& d) const override {
    const int32_t pad = d.tokenizer->pad_id();
    return [pad](std::span<const data::Example> ex, data::Rng&) {
      return data::collate_classification(ex, pad);
    };
  }

  std::shared_ptr<nn::PretrainedModel> make_model(const RunConfig& c,
                                                  const TaskData& d) const override {
    return make_sequence_classifier(c, d);
  }

  std::vector<std::string> scored_classes(const std::vector<std::string>& labels) const override {
    return labels;
  }
  // The training file's label column takes milliseconds to read, so a misspelt class name in
  // eval.metric_for_best_model stops the run before a vocabulary is trained.
  std::vector<std::string> scored_classes_from_config(const RunConfig& c) const override {
    return c.data.labels ? *c.data.labels : data::classification_label_names(c.data.train);
  }
};

const TrainingTask& sequence_classification_task() {
  static const SequenceClassificationTask task;
  return task;
}

[[maybe_unused]] const bool kRegistered =
    register_task("classification", 40, sequence_classification_task);

}  // namespace

}  // namespace heed::train
