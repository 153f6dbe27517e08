// A label per word (part-of-speech tags) with a BERT, RoBERTa or DistilBERT and a token
// classification head: CoNLL-style files of `word<TAB>tag` lines, a blank line between sentences.
#include "data/collators.h"
#include "nn/models/bert.h"
#include "train/tasks/model_configs.h"
#include "train/tasks/registry.h"

namespace heed::train {
namespace {

class TokenClassificationTask final : public TrainingTask {
 public:
  std::string_view summary() const override { return "one tag per word"; }
  std::vector<Arch> architectures() const override {
    return {Arch::kBert, Arch::kRoberta, Arch::kDistilBert};
  }

  std::vector<std::string_view> vocabulary_texts(std::string_view line) const override {
    std::vector<std::string_view> fields = data::split_tabs(line);
    if (fields.size() > 1) fields.resize(1);  // the word, not its tag
    return fields;
  }

  // The tag set of every split, so that a tag seen only in valid or test still has an id.
  data::LabelNames initial_labels(const RunConfig& c,
                                  std::span<const std::string> files) const override {
    if (c.data.labels) return *c.data.labels;
    return data::conll_tag_names({files.begin(), files.end()});
  }

  std::shared_ptr<const data::Dataset> read_split(const SplitSource& s,
                                                  data::LabelNames& labels) const override {
    auto set = std::make_shared<data::TokenClassificationDataset>(
        s.path, *s.data.tokenizer, static_cast<size_t>(s.config.data.max_seq_length), labels);
    if (labels.empty()) labels = set->labels();
    return set;
  }

  data::CollateFn collator(const RunConfig&, const TaskData& d) const override {
    const int32_t pad = d.tokenizer->pad_id();
    return [pad](std::span<const data::Example> ex, data::Rng&) {
      return data::collate_token_classification(ex, pad);
    };
  }

  std::shared_ptr<nn::PretrainedModel> make_model(const RunConfig& c,
                                                  const TaskData& d) const override {
    return make_token_classifier(c, d);
  }
};

const TrainingTask& token_classification_task() {
  static const TokenClassificationTask task;
  return task;
}

[[maybe_unused]] const bool kRegistered =
    register_task("token_classification", 50, token_classification_task);

}  // namespace

}  // namespace heed::train
