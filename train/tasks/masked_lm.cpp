// Masked-LM pretraining of a BERT, a RoBERTa or a DistilBERT: windows of a tokenized corpus, 15%
// of their tokens to recover, the prediction head run at those positions only.
#include "data/collators.h"
#include "nn/models/bert.h"
#include "train/run/batch_tensors.h"
#include "train/tasks/model_configs.h"
#include "train/tasks/predictions.h"
#include "train/tasks/registry.h"

namespace heed::train {
namespace {

class MaskedLmTask final : public TrainingTask {
 public:
  std::string_view summary() const override { return "masked LM"; }
  std::vector<Arch> architectures() const override {
    return {Arch::kBert, Arch::kRoberta, Arch::kDistilBert};
  }
  // [CLS], one token, [SEP] (<s>, one token, </s>).
  int64_t min_sequence_length() const override { return 3; }
  // The mean loss of a masked token per byte: what compares a WordPiece BERT with a
  // byte-level-BPE RoBERTa on the same text.
  bool reports_bits_per_byte() const override { return true; }

  std::shared_ptr<const data::Dataset> read_split(const SplitSource& s,
                                                  data::LabelNames&) const override {
    const data::TextTokenizer& tok = *s.data.tokenizer;
    return std::make_shared<data::MlmWindowDataset>(
        s.token_cache(), tok.start_id(), tok.end_id(),
        static_cast<size_t>(s.config.data.max_seq_length));
  }

  data::CollateFn collator(const RunConfig& c, const TaskData& d) const override {
    data::TokenIds ids = data::TokenIds::from(*d.tokenizer);
    data::MlmOptions o{c.data.mlm_probability, c.data.mask_replace_prob,
                       c.data.random_replace_prob};
    return [ids, o](std::span<const data::Example> ex, data::Rng& rng) {
      return data::collate_mlm(ex, ids, o, rng);
    };
  }

  std::shared_ptr<nn::PretrainedModel> make_model(const RunConfig& c,
                                                  const TaskData& d) const override {
    return make_masked_lm(c, d);
  }

  BatchLoss loss(const nn::PretrainedModel& model, const data::Batch& batch,
                 const LossRequest& request) const override {
    nn::ModelInputs in = to_model_inputs(batch);
    in.only_labeled_logits = true;
    in.label_smoothing = request.label_smoothing;
    in.head_outputs = request.outputs;
    nn::ModelOutputs out = model.forward(in);
    return {.loss = out.loss,
            .logits = out.logits,
            .predictions = out.predictions,
            .labels = out.labels,
            .targets = batch.num_target_tokens};
  }

  std::string end_of_run_examples(const nn::PretrainedModel& model, const TaskData& d,
                                  const RunConfig&) const override {
    if (!d.valid) return {};
    return mlm_prediction_examples(model, *d.tokenizer, *d.valid, 3, 5);
  }
};

const TrainingTask& masked_lm_task() {
  static const MaskedLmTask task;
  return task;
}

[[maybe_unused]] const bool kRegistered = register_task("mlm", 10, masked_lm_task);

}  // namespace

}  // namespace heed::train
