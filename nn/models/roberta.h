#pragma once
// RoBERTa as Hugging Face's modeling_roberta: BERT's encoder (bert.h) under the name `roberta`,
// with positions counted from pad_token_id + 1 over the real tokens, one token type, and its own
// heads (lm_head, and classifier.dense + tanh + classifier.out_proj on <s>).
#include <memory>
#include <string>

#include "nn/models/bert.h"

namespace heed::nn {

// Hugging Face's RobertaConfig: BertConfig's fields with RoBERTa's defaults (its byte-level BPE
// vocabulary, 514 positions for 512 tokens as positions start after the padding id, one token
// type, LayerNorm eps 1e-5, <pad> = 1). A type of its own, as model.arch chooses by type.
struct RobertaConfig : BertConfig {
  RobertaConfig() {
    vocab_size = 50265;
    max_position_embeddings = 514;
    type_vocab_size = 1;
    layer_norm_eps = 1e-5;
    pad_token_id = 1;
  }
  explicit RobertaConfig(const BertConfig& fields) : BertConfig(fields) {}
  void validate() const { check_config_fields(*this, "RobertaConfig"); }
  // The longest sequence the position table places: positions run to pad_token_id + T.
  int64_t max_tokens() const { return max_position_embeddings - pad_token_id - 1; }
};

const EncoderFamily& roberta_family();

class RobertaForMaskedLM : public BertForMaskedLM {
 public:
  RobertaForMaskedLM(const BertConfig& config, uint64_t seed, DType dtype = DType::f32)
      : BertForMaskedLM(config, seed, dtype, roberta_family()) {}
};

// Hugging Face's RobertaClassificationHead on the <s> rows: dropout, dense, tanh, dropout,
// out_proj; no pooler.
class RobertaForSequenceClassification : public BertBase {
 public:
  RobertaForSequenceClassification(const BertConfig& config, uint64_t seed,
                                   DType dtype = DType::f32);
  // logits [B, num_labels]; loss: cross-entropy (mean squared error if num_labels == 1).
  ModelOutputs forward(const ModelInputs& inputs) const override;
  std::string architecture() const override { return "RobertaForSequenceClassification"; }

  std::shared_ptr<Dropout> dropout;
  std::shared_ptr<Linear> dense, out_proj;
};

class RobertaForTokenClassification : public BertForTokenClassification {
 public:
  RobertaForTokenClassification(const BertConfig& config, uint64_t seed, DType dtype = DType::f32)
      : BertForTokenClassification(config, seed, dtype, roberta_family()) {}
};

}  // namespace heed::nn
