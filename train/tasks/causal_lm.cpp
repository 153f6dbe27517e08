// Next-token prediction with a GPT: windows of a tokenized corpus. The collator is the one
// place that pairs position t with token t + 1 (its labels come shifted; GPT::forward takes
// them as they are).
#include "data/collators.h"
#include "nn/models/gpt.h"
#include "train/tasks/model_configs.h"
#include "train/tasks/predictions.h"
#include "train/tasks/registry.h"

namespace heed::train {
namespace {

class CausalLmTask final : public TrainingTask {
 public:
  std::string_view summary() const override { return "causal LM: the next token"; }
  std::vector<Arch> architectures() const override { return {Arch::kGpt2}; }
  // Any tokenizer fills the token cache: documents end in its end token (WordPiece's [SEP],
  // GPT-2's <|endoftext|>).
  bool accepts_any_tokenizer() const override { return true; }
  bool reports_bits_per_byte() const override { return true; }

  std::shared_ptr<const data::Dataset> read_split(const SplitSource& s,
                                                  data::LabelNames&) const override {
    return std::make_shared<data::CausalWindowDataset>(
        s.token_cache(), s.data.tokenizer->end_id(),
        static_cast<size_t>(s.config.data.max_seq_length));
  }

  data::CollateFn collator(const RunConfig&, const TaskData& d) const override {
    const int32_t pad = d.tokenizer->pad_id();
    return [pad](std::span<const data::Example> ex, data::Rng&) {
      return data::collate_causal_lm(ex, pad);
    };
  }

  std::shared_ptr<nn::PretrainedModel> make_model(const RunConfig& c,
                                                  const TaskData& d) const override {
    return std::make_shared<nn::GPT>(gpt2_config(c, d), static_cast<uint64_t>(c.train.seed));
  }

  std::string end_of_run_examples(const nn::PretrainedModel& model, const TaskData& d,
                                  const RunConfig& c) const override {
    if (!d.valid) return {};
    return gpt_sample_examples(model, *d.tokenizer, *d.valid, 3, 12, 24,
                               static_cast<uint64_t>(c.train.seed));
  }
};

const TrainingTask& causal_lm_task() {
  static const CausalLmTask task;
  return task;
}

[[maybe_unused]] const bool kRegistered = register_task("clm", 20, causal_lm_task);

}  // namespace

}  // namespace heed::train
