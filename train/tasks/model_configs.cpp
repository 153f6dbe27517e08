#include "train/tasks/model_configs.h"

#include "base/error.h"

namespace heed::train {

namespace {

// The tokenizer's and the data's values where model.* leaves them unset.
template <typename Config>
Config with_tokenizer_values(Config config, const RunConfig& c, const TaskData& d) {
  config.vocab_size = c.model.vocab_size.value_or(d.tokenizer->vocab_size());
  config.pad_token_id = c.model.pad_token_id.value_or(d.tokenizer->pad_id());
  return config;
}

template <typename Config>
Config with_labels(Config config, const RunConfig& c, const TaskData& d) {
  config.num_labels = c.model.num_labels.value_or(static_cast<int64_t>(d.labels.size()));
  config.id2label = d.labels;
  // One label makes Hugging Face's regression head (an MSE loss): nothing to smooth.
  HEED_CHECK(config.num_labels > 1 || c.train.label_smoothing == 0.0,
             "train.label_smoothing: the model has one label, which makes a regression "
             "head (MSE loss); smoothing needs at least 2 labels");
  return config;
}

}  // namespace

nn::BertConfig encoder_config_fields(const ModelConfig& m) {
  if (m.arch() == Arch::kDistilBert) return m.as<nn::DistilBertConfig>().encoder_config();
  if (m.arch() == Arch::kRoberta) return m.as<nn::RobertaConfig>();
  return m.as<nn::BertConfig>();
}

nn::BertConfig bert_config(const RunConfig& c, const TaskData& d) {
  const ModelConfig& m = c.model;
  if (m.arch() == Arch::kDistilBert) return distilbert_config(c, d).encoder_config();
  if (m.arch() == Arch::kRoberta) return with_tokenizer_values(m.as<nn::RobertaConfig>(), c, d);
  return with_tokenizer_values(m.as<nn::BertConfig>(), c, d);
}

nn::BertConfig bert_classifier_config(const RunConfig& c, const TaskData& d) {
  return with_labels(bert_config(c, d), c, d);
}

nn::DistilBertConfig distilbert_config(const RunConfig& c, const TaskData& d) {
  return with_tokenizer_values(c.model.as<nn::DistilBertConfig>(), c, d);
}

nn::DistilBertConfig distilbert_classifier_config(const RunConfig& c, const TaskData& d) {
  return with_labels(distilbert_config(c, d), c, d);
}

std::shared_ptr<nn::PretrainedModel> make_masked_lm(const RunConfig& c, const TaskData& d) {
  const auto seed = static_cast<uint64_t>(c.train.seed);
  if (c.model.arch() == Arch::kDistilBert)
    return std::make_shared<nn::DistilBertForMaskedLM>(distilbert_config(c, d), seed);
  if (c.model.arch() == Arch::kRoberta)
    return std::make_shared<nn::RobertaForMaskedLM>(bert_config(c, d), seed);
  return std::make_shared<nn::BertForMaskedLM>(bert_config(c, d), seed);
}

std::shared_ptr<nn::PretrainedModel> make_sequence_classifier(const RunConfig& c,
                                                              const TaskData& d) {
  const auto seed = static_cast<uint64_t>(c.train.seed);
  if (c.model.arch() == Arch::kDistilBert)
    return std::make_shared<nn::DistilBertForSequenceClassification>(
        distilbert_classifier_config(c, d), seed);
  if (c.model.arch() == Arch::kRoberta)
    return std::make_shared<nn::RobertaForSequenceClassification>(bert_classifier_config(c, d),
                                                                  seed);
  return std::make_shared<nn::BertForSequenceClassification>(bert_classifier_config(c, d), seed);
}

std::shared_ptr<nn::PretrainedModel> make_token_classifier(const RunConfig& c, const TaskData& d) {
  const auto seed = static_cast<uint64_t>(c.train.seed);
  if (c.model.arch() == Arch::kDistilBert)
    return std::make_shared<nn::DistilBertForTokenClassification>(
        distilbert_classifier_config(c, d), seed);
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

int32_t decoder_start_id(const RunConfig& c, const data::TextTokenizer& tokenizer) {
  if (c.model.decoder_start_token_id) return static_cast<int32_t>(*c.model.decoder_start_token_id);
  // T5 starts its decoder on the pad token (T5's own models have no <s> at all).
  return c.model.arch() == Arch::kT5 ? tokenizer.pad_id() : tokenizer.start_id();
}

nn::BartConfig bart_config(const RunConfig& c, const TaskData& d) {
  const ModelConfig& m = c.model;
  nn::BartConfig b = m.as<nn::BartConfig>();
  b.vocab_size = m.vocab_size.value_or(d.tokenizer->vocab_size());
  b.pad_token_id = m.pad_token_id.value_or(d.tokenizer->pad_id());
  b.bos_token_id = m.bos_token_id.value_or(d.tokenizer->start_id());
  b.eos_token_id = m.eos_token_id.value_or(d.tokenizer->end_id());
  b.decoder_start_token_id = decoder_start_id(c, *d.tokenizer);
  return b;
}

nn::T5Config t5_config(const RunConfig& c, const TaskData& d) {
  const ModelConfig& m = c.model;
  nn::T5Config t = m.as<nn::T5Config>();
  t.vocab_size = m.vocab_size.value_or(d.tokenizer->vocab_size());
  t.pad_token_id = m.pad_token_id.value_or(d.tokenizer->pad_id());
  t.eos_token_id = m.eos_token_id.value_or(d.tokenizer->end_id());
  t.decoder_start_token_id = decoder_start_id(c, *d.tokenizer);
  return t;
}

}  // namespace heed::train
