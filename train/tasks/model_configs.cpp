#include "train/tasks/model_configs.h"

#include "base/error.h"

namespace heed::train {

nn::BertConfig encoder_config_fields(const ModelConfig& m) {
  if (m.arch() == Arch::kRoberta) return m.as<nn::RobertaConfig>();
  return m.as<nn::BertConfig>();
}

nn::BertConfig bert_config(const RunConfig& c, const TaskData& d) {
  const ModelConfig& m = c.model;
  nn::BertConfig b = encoder_config_fields(m);
  b.vocab_size = m.vocab_size.value_or(d.tokenizer->vocab_size());
  b.pad_token_id = m.pad_token_id.value_or(d.tokenizer->pad_id());
  return b;
}

nn::BertConfig bert_classifier_config(const RunConfig& c, const TaskData& d) {
  nn::BertConfig b = bert_config(c, d);
  b.num_labels = c.model.num_labels.value_or(static_cast<int64_t>(d.labels.size()));
  b.id2label = d.labels;
  // One label makes Hugging Face's regression head (an MSE loss): nothing to smooth.
  HEED_CHECK(b.num_labels > 1 || c.train.label_smoothing == 0.0,
             "train.label_smoothing: the model has one label, which makes a regression "
             "head (MSE loss); smoothing needs at least 2 labels");
  return b;
}

std::shared_ptr<nn::PretrainedModel> make_masked_lm(const RunConfig& c, const TaskData& d) {
  const auto seed = static_cast<uint64_t>(c.train.seed);
  if (c.model.arch() == Arch::kRoberta)
    return std::make_shared<nn::RobertaForMaskedLM>(bert_config(c, d), seed);
  return std::make_shared<nn::BertForMaskedLM>(bert_config(c, d), seed);
}

std::shared_ptr<nn::PretrainedModel> make_sequence_classifier(const RunConfig& c,
                                                              const TaskData& d) {
  const auto seed = static_cast<uint64_t>(c.train.seed);
  if (c.model.arch() == Arch::kRoberta)
    return std::make_shared<nn::RobertaForSequenceClassification>(bert_classifier_config(c, d),
                                                                  seed);
  return std::make_shared<nn::BertForSequenceClassification>(bert_classifier_config(c, d), seed);
}

std::shared_ptr<nn::PretrainedModel> make_token_classifier(const RunConfig& c, const TaskData& d) {
  const auto seed = static_cast<uint64_t>(c.train.seed);
  if (c.model.arch() == Arch::kRoberta)
    return std::make_shared<nn::RobertaForTokenClassification>(bert_classifier_config(c, d), seed);
  return std::make_shared<nn::BertForTokenClassification>(bert_classifier_config(c, d), seed);
}

nn::GPT2Config gpt2_config(const RunConfig& c, const TaskData& d) {
  const ModelConfig& m = c.model;
  nn::GPT2Config g = m.as<nn::GPT2Config>();
  g.vocab_size = m.vocab_size.value_or(d.tokenizer->vocab_size());
  // One separator between documents serves as both (GPT-2's <|endoftext|>).
  g.bos_token_id = m.bos_token_id.value_or(d.tokenizer->end_id());
  g.eos_token_id = m.eos_token_id.value_or(d.tokenizer->end_id());
  return g;
}

nn::BartConfig bart_config(const RunConfig& c, const TaskData& d) {
  const ModelConfig& m = c.model;
  nn::BartConfig b = m.as<nn::BartConfig>();
  b.vocab_size = m.vocab_size.value_or(d.tokenizer->vocab_size());
  b.pad_token_id = m.pad_token_id.value_or(d.tokenizer->pad_id());
  b.bos_token_id = m.bos_token_id.value_or(d.tokenizer->start_id());
  b.eos_token_id = m.eos_token_id.value_or(d.tokenizer->end_id());
  b.decoder_start_token_id = m.decoder_start_token_id.value_or(d.tokenizer->start_id());
  return b;
}

}  // namespace heed::train
