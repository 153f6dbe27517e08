#pragma once
// DistilBERT as Hugging Face's modeling_distilbert: BERT's encoder (bert.h) under the name
// `distilbert`, with its own names (q_lin, sa_layer_norm, ffn.lin1, ...), no token types, no
// pooler, no dropout on the attention block's output, optionally a fixed sinusoidal position
// table, and its own heads (vocab_transform / vocab_layer_norm / vocab_projector; pre_classifier
// + ReLU + classifier). Its config keeps DistilBERT's own field names (dim, n_layers, ...) and
// converts to the BertConfig the shared encoder takes.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nn/models/bert.h"

namespace heed::nn {

// Field names and defaults are Hugging Face's DistilBertConfig (LayerNorm eps is fixed at
// 1e-12 there, so it is no field).
struct DistilBertConfig {
  int64_t vocab_size = 30522;
  int64_t max_position_embeddings = 512;
  // A fixed table of the original Transformer instead of learned positions; Hugging Face keeps
  // it as position_embeddings.weight without a gradient, and so does heed (a buffer).
  bool sinusoidal_pos_embds = false;
  int64_t n_layers = 6;
  int64_t n_heads = 12;
  int64_t dim = 768;
  int64_t hidden_dim = 3072;
  double dropout = 0.1;
  double attention_dropout = 0.1;
  std::string activation = "gelu";
  double initializer_range = 0.02;
  double qa_dropout = 0.1;  // question answering's head, which heed does not build
  double seq_classif_dropout = 0.2;
  int64_t pad_token_id = 0;
  int64_t num_labels = 2;
  std::vector<std::string> id2label;  // label names, if known (config.json's id2label)

  static constexpr double kLayerNormEps = 1e-12;

  // Every field once (nn/models/config_fields.h), in Hugging Face's order.
  template <typename Self, typename V>
  static void visit(Self& c, V& v) {
    using namespace field;
    v.field("vocab_size", c.vocab_size, {.rule = AtLeast{1}, .source = Source::kTokenizerOrData});
    v.field("max_position_embeddings", c.max_position_embeddings, {.rule = AtLeast{1}});
    v.field("sinusoidal_pos_embds", c.sinusoidal_pos_embds, {});
    v.field("n_layers", c.n_layers, {.rule = AtLeast{1}});
    v.field("n_heads", c.n_heads, {.rule = AtLeast{1}});
    v.field("dim", c.dim, {.rule = AtLeast{1}});
    v.field("hidden_dim", c.hidden_dim, {.rule = AtLeast{1}});
    v.field("dropout", c.dropout, {.rule = Probability{}});
    v.field("attention_dropout", c.attention_dropout, {.rule = Probability{}});
    v.field("activation", c.activation, {.rule = OneOf{kActivationNames, "activation"}});
    v.field("initializer_range", c.initializer_range, {.rule = Positive{}});
    v.field("qa_dropout", c.qa_dropout, {.rule = Probability{}});
    v.field("seq_classif_dropout", c.seq_classif_dropout, {.rule = Probability{}});
    v.field("pad_token_id", c.pad_token_id,
            {.rule = TokenId{.looked_up = true}, .source = Source::kTokenizerOrData});
    v.field("num_labels", c.num_labels,
            {.rule = AtLeast{1}, .source = Source::kTokenizerOrData, .written_to_json = false});
    v.divides("n_heads", c.n_heads, "dim", c.dim);
  }
  // Throws naming the field when a value is impossible.
  void validate() const { check_config_fields(*this, "DistilBertConfig"); }
  // The same model in the shared encoder's terms (validated first, so that an error names
  // DistilBERT's fields): dim is hidden_size, dropout hidden_dropout_prob, and so on.
  BertConfig encoder_config() const;
};

const EncoderFamily& distilbert_family();

// config.json of a DistilBERT model: its config's fields, model_type "distilbert", the labels.
nlohmann::json distilbert_config_json(const DistilBertConfig& config,
                                      const std::string& architecture);

// Hugging Face's DistilBertForMaskedLM: vocab_transform, activation, vocab_layer_norm, then
// vocab_projector, whose weight is the word embeddings and whose bias is its own.
class DistilBertForMaskedLM : public BertForMaskedLM {
 public:
  DistilBertForMaskedLM(const DistilBertConfig& config, uint64_t seed, DType dtype = DType::f32);
  nlohmann::json config_json() const override {
    return distilbert_config_json(distil_config, architecture());
  }

  DistilBertConfig distil_config;
};

// Hugging Face's DistilBertForSequenceClassification: the first token's hidden state through
// pre_classifier, ReLU, dropout (seq_classif_dropout) and classifier.
class DistilBertForSequenceClassification : public BertBase {
 public:
  DistilBertForSequenceClassification(const DistilBertConfig& config, uint64_t seed,
                                      DType dtype = DType::f32);
  // logits [B, num_labels]; loss: cross-entropy (mean squared error if num_labels == 1).
  ModelOutputs forward(const ModelInputs& inputs) const override;
  std::string architecture() const override { return "DistilBertForSequenceClassification"; }
  nlohmann::json config_json() const override {
    return distilbert_config_json(distil_config, architecture());
  }

  DistilBertConfig distil_config;
  std::shared_ptr<Linear> pre_classifier, classifier;
  std::shared_ptr<Dropout> dropout;
};

// Hugging Face's DistilBertForTokenClassification: dropout (the config's dropout), classifier.
class DistilBertForTokenClassification : public BertForTokenClassification {
 public:
  DistilBertForTokenClassification(const DistilBertConfig& config, uint64_t seed,
                                   DType dtype = DType::f32);
  nlohmann::json config_json() const override {
    return distilbert_config_json(distil_config, architecture());
  }

  DistilBertConfig distil_config;
};

// Initialising a DistilBERT student from a BERT teacher as Sanh et al.'s extract_distilbert.py
// does: the name a BERT checkpoint tensor takes in the student, or nullopt for one the student
// does not take (token types, the pooler, next-sentence and classification heads, the tied
// decoder weight, relative distance tables, teacher layers not in layer_map). Teacher layer
// layer_map[i] becomes student layer i; the embeddings and the masked-LM head's transform and
// bias carry over. Names may carry the `bert.` prefix or not. layer_map must not name a teacher
// layer twice (one tensor would then start two student layers).
std::optional<std::string> distilbert_name_from_bert(const std::string& bert_name,
                                                     std::span<const int64_t> layer_map);

// The other way: the BERT teacher tensor (with the `bert.` prefix) that starts the student's
// tensor `distilbert_name`, or nullopt for one the teacher has no source for (the
// classification heads).
std::optional<std::string> bert_name_for_distilbert(const std::string& distilbert_name,
                                                    std::span<const int64_t> layer_map);

}  // namespace heed::nn
