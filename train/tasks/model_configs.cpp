#include "train/tasks/model_configs.h"

#include "autograd/error.h"

namespace heed::train {

nn::BertConfig bert_config(const RunConfig& c, const TaskData& d) {
  const ModelConfig& m = c.model;
  nn::BertConfig b = m.bert;
  b.vocab_size = m.vocab_size.value_or(d.vocab_size());
  b.pad_token_id = m.pad_token_id.value_or(d.wordpiece->pad_id());
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

nn::GPT2Config gpt2_config(const RunConfig& c, const TaskData& d) {
  const ModelConfig& m = c.model;
  nn::GPT2Config g = m.gpt2;
  g.vocab_size = m.vocab_size.value_or(d.vocab_size());
  const int64_t sep = d.wordpiece ? d.wordpiece->sep_id() : d.chars->eos_id();
  g.bos_token_id = m.bos_token_id.value_or(sep);
  g.eos_token_id = m.eos_token_id.value_or(sep);
  return g;
}

nn::BartConfig bart_config(const RunConfig& c, const TaskData& d) {
  const ModelConfig& m = c.model;
  nn::BartConfig b = m.bart;
  b.vocab_size = m.vocab_size.value_or(d.vocab_size());
  // A char vocabulary has its own bos/eos; a wordpiece one uses [CLS] and [SEP].
  const int64_t pad = d.chars ? d.chars->pad_id() : d.wordpiece->pad_id();
  const int64_t bos = d.chars ? d.chars->bos_id() : d.wordpiece->cls_id();
  const int64_t eos = d.chars ? d.chars->eos_id() : d.wordpiece->sep_id();
  b.pad_token_id = m.pad_token_id.value_or(pad);
  b.bos_token_id = m.bos_token_id.value_or(bos);
  b.eos_token_id = m.eos_token_id.value_or(eos);
  b.decoder_start_token_id = m.decoder_start_token_id.value_or(bos);
  return b;
}

}  // namespace heed::train
