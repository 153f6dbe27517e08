#include "nn/models/bert.h"

#include "autograd/ops.h"
#include "nn/fused_loss.h"
#include "nn/labelled_rows.h"
#include "nn/models/config_json.h"
#include "nn/positional.h"
#include "nn/relative_positions.h"

namespace heed::nn {

namespace {

LayerOptions bert_layer_options(const BertConfig& c, DType dtype) {
  LayerOptions o;
  o.attention = {
      .embed_dim = c.hidden_size,
      .num_heads = c.num_attention_heads,
      .dropout = c.attention_probs_dropout_prob,
      .init_std = c.initializer_range,
      .output_init_std = c.initializer_range,
      .dtype = dtype,
      .names = {"self.query", "self.key", "self.value", "output.dense", "self.distance_embedding"},
      .relative_positions = relative_positions_of(c.position_embedding_type),
      .max_positions = c.max_position_embeddings};
  o.feed_forward = {.hidden_size = c.hidden_size,
                    .intermediate_size = c.intermediate_size,
                    .activation = parse_activation(c.hidden_act),
                    .dropout = c.hidden_dropout_prob,
                    .init_std = c.initializer_range,
                    .output_init_std = c.initializer_range,
                    .dtype = dtype,
                    .in_name = "intermediate.dense",
                    .out_name = "output.dense"};
  o.norm_first = false;
  o.layer_norm_eps = c.layer_norm_eps;
  o.hidden_dropout = c.hidden_dropout_prob;
  o.names = {.self_attention = "attention",
             .self_attention_norm = "attention.output.LayerNorm",
             .feed_forward = "",
             .final_norm = "output.LayerNorm"};
  return o;
}

// Positions 0..T-1, checked against the table size.
Tensor position_ids(int64_t T, int64_t max_positions) {
  HEED_CHECK(T <= max_positions, "sequence of {} tokens is longer than max_position_embeddings {}",
             T, max_positions);
  return arange(0, T);
}

Tensor masked_lm_loss(const Tensor& logits, const Tensor& labels, double label_smoothing) {
  const int64_t classes = logits.size(-1);
  return cross_entropy(logits.reshape({-1, classes}), labels.reshape({-1}), -100, label_smoothing);
}

}  // namespace

nlohmann::json BertBase::config_json() const {
  nlohmann::json j = to_json(config);
  j["architectures"] = {architecture()};
  return j;
}

bool BertBase::ignores_checkpoint_name(const std::string& name) const {
  // position_ids is a buffer of old checkpoints; the decoder weight is the tied word
  // embedding table; seq_relationship is the next-sentence head of BertForPreTraining.
  return name == "bert.embeddings.position_ids" || name == "embeddings.position_ids" ||
         name == "cls.predictions.decoder.weight" || name.rfind("cls.seq_relationship.", 0) == 0;
}

std::string BertBase::canonical_checkpoint_name(const std::string& name) const {
  if (name == "cls.predictions.decoder.bias") return "cls.predictions.bias";  // an alias
  return PretrainedModel::canonical_checkpoint_name(name);
}

BertEmbeddings::BertEmbeddings(const BertConfig& c, Generator& init,
                               std::shared_ptr<Generator> dropout_gen, DType dtype)
    : max_positions(c.max_position_embeddings), position_embedding_type(c.position_embedding_type) {
  word_embeddings = register_module(
      "word_embeddings", std::make_shared<Embedding>(c.vocab_size, c.hidden_size, init,
                                                     c.pad_token_id, c.initializer_range, dtype));
  // With relative positions the table exists, as in Hugging Face's files, but is not added.
  if (c.position_embedding_type != "sinusoidal") {
    position_embeddings = register_module(
        "position_embeddings", std::make_shared<Embedding>(c.max_position_embeddings, c.hidden_size,
                                                           init, -1, c.initializer_range, dtype));
  } else {
    sinusoidal_table = sinusoidal_positions(c.max_position_embeddings, c.hidden_size, dtype);
  }
  token_type_embeddings = register_module(
      "token_type_embeddings", std::make_shared<Embedding>(c.type_vocab_size, c.hidden_size, init,
                                                           -1, c.initializer_range, dtype));
  layer_norm = register_module("LayerNorm",
                               std::make_shared<LayerNorm>(c.hidden_size, c.layer_norm_eps, dtype));
  dropout = register_module(
      "dropout", std::make_shared<Dropout>(c.hidden_dropout_prob, std::move(dropout_gen)));
}

Tensor BertEmbeddings::forward(const Tensor& input_ids, const Tensor& token_type_ids) const {
  HEED_CHECK(input_ids.dim() == 2, "BERT: input_ids must be [B, T], got {}", input_ids.shape_str());
  const int64_t T = input_ids.size(1);
  Tensor positions = position_ids(T, max_positions);
  Tensor x = word_embeddings->forward(input_ids);
  if (sinusoidal_table.defined()) {
    x = add(x, sinusoidal_table.slice(0, 0, T));
  } else if (relative_positions_of(position_embedding_type) == RelativePositions::kNone) {
    x = add(x, position_embeddings->forward(positions));
  }
  Tensor types = token_type_ids.defined() ? token_type_ids : zeros(input_ids.shape(), DType::i64);
  x = add(x, token_type_embeddings->forward(types));
  return dropout->forward(layer_norm->forward(x));
}

BertModel::BertModel(const BertConfig& c, Generator& init, std::shared_ptr<Generator> dropout_gen,
                     bool add_pooling_layer, DType dtype)
    : config(c) {
  c.validate();
  embeddings =
      register_module("embeddings", std::make_shared<BertEmbeddings>(c, init, dropout_gen, dtype));
  const LayerOptions options = bert_layer_options(c, dtype);
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    layers.push_back(register_module("encoder.layer." + std::to_string(i),
                                     std::make_shared<EncoderLayer>(options, init, dropout_gen)));
  }
  if (add_pooling_layer) {
    pooler =
        register_module("pooler.dense", std::make_shared<Linear>(c.hidden_size, c.hidden_size, init,
                                                                 true, c.initializer_range, dtype));
  }
}

Tensor BertModel::forward(const Tensor& input_ids, const Tensor& attention_mask,
                          const Tensor& token_type_ids, std::vector<Tensor>* attentions,
                          const Tensor& output_rows) const {
  Tensor h = embeddings->forward(input_ids, token_type_ids);
  const Tensor mask = keep_mask(attention_mask);
  for (size_t i = 0; i < layers.size(); ++i) {
    Tensor probs;
    const bool last = i + 1 == layers.size();
    h = layers[i]->forward(h, {.padding_mask = mask,
                               .attention_probs = attentions ? &probs : nullptr,
                               .output_rows = last ? output_rows : Tensor()});
    if (attentions) attentions->push_back(probs);
  }
  return h;
}

Tensor BertModel::pool(const Tensor& cls) const {
  HEED_CHECK(pooler != nullptr, "BERT: this model was built without a pooling layer");
  return tanh(pooler->forward(cls));
}

BertForMaskedLM::BertForMaskedLM(const BertConfig& c, uint64_t seed, DType dtype) {
  config = c;
  Generator init(seed);
  dropout_generator = std::make_shared<Generator>(seed + 1);
  bert = register_module("bert",
                         std::make_shared<BertModel>(c, init, dropout_generator, false, dtype));
  transform = register_module("cls.predictions.transform.dense",
                              std::make_shared<Linear>(c.hidden_size, c.hidden_size, init, true,
                                                       c.initializer_range, dtype));
  transform_norm =
      register_module("cls.predictions.transform.LayerNorm",
                      std::make_shared<LayerNorm>(c.hidden_size, c.layer_norm_eps, dtype));
  decoder_bias = register_parameter("cls.predictions.bias", zeros({c.vocab_size}, dtype));
}

ModelOutputs BertForMaskedLM::forward(const ModelInputs& in) const {
  if (in.only_labeled_logits && in.labels.defined()) return forward_labelled(in);
  ModelOutputs out;
  Tensor h = bert->forward(in.input_ids, in.attention_mask, in.token_type_ids,
                           in.output_attentions ? &out.attentions : nullptr);
  h = transform_norm->forward(activate(transform->forward(h), parse_activation(config.hidden_act)));
  // The decoder is tied to the word embeddings: logits = h E^T + b.
  out.logits = linear(h, bert->embeddings->word_embeddings->weight, decoder_bias);
  if (in.labels.defined()) out.loss = masked_lm_loss(out.logits, in.labels, in.label_smoothing);
  return out;
}

ModelOutputs BertForMaskedLM::forward_labelled(const ModelInputs& in) const {
  // Only the labelled rows reach the loss: the last layer computes them alone after its
  // attention (an embedding lookup picks them; its backward scatters the gradient back),
  // and the head runs on them alone.
  ModelOutputs out;
  const LabelledRows labelled = labelled_rows(in.labels);
  out.labels = labelled.labels;
  Tensor picked = bert->forward(in.input_ids, in.attention_mask, in.token_type_ids,
                                in.output_attentions ? &out.attentions : nullptr, labelled.rows);
  picked = transform_norm->forward(
      activate(transform->forward(picked), parse_activation(config.hidden_act)));
  const Tensor& embeddings = bert->embeddings->word_embeddings->weight;
  if (in.head_outputs != HeadOutputs::logits) {
    // The decoder and the loss as one op: the logits' gradient is made, summed into the
    // bias gradient and rounded for the products while each row is in cache.
    out.loss = fused_linear_cross_entropy(
        picked, embeddings, out.labels,
        {.bias = decoder_bias,
         .label_smoothing = in.label_smoothing,
         .predictions = in.head_outputs == HeadOutputs::predictions ? &out.predictions : nullptr});
    return out;
  }
  out.logits = linear(picked, embeddings, decoder_bias);
  out.loss = cross_entropy(out.logits, out.labels, -100, in.label_smoothing);
  return out;
}

// The body both classification heads share: the encoder (with or without the pooler), the
// dropout before the classifier (classifier_dropout, else hidden_dropout_prob), the classifier.
template <typename Head>
void BertBase::build_classification_head(Head& head, const BertConfig& c, uint64_t seed,
                                         DType dtype, bool pooler) {
  head.config = c;
  Generator init(seed);
  head.dropout_generator = std::make_shared<Generator>(seed + 1);
  head.bert = head.register_module(
      "bert", std::make_shared<BertModel>(c, init, head.dropout_generator, pooler, dtype));
  head.dropout = head.register_module(
      "dropout", std::make_shared<Dropout>(c.classifier_dropout.value_or(c.hidden_dropout_prob),
                                           head.dropout_generator));
  head.classifier = head.register_module(
      "classifier", std::make_shared<Linear>(c.hidden_size, c.num_labels, init, true,
                                             c.initializer_range, dtype));
}

BertForSequenceClassification::BertForSequenceClassification(const BertConfig& c, uint64_t seed,
                                                             DType dtype) {
  build_classification_head(*this, c, seed, dtype, /*pooler=*/true);
}

ModelOutputs BertForSequenceClassification::forward(const ModelInputs& in) const {
  ModelOutputs out;
  // Only the [CLS] rows reach the head: the last layer computes them alone after attention.
  HEED_CHECK(in.input_ids.dim() == 2, "BERT: input_ids must be [B, T], got {}",
             in.input_ids.shape_str());
  const int64_t B = in.input_ids.size(0), T = in.input_ids.size(1);
  std::vector<int64_t> cls_rows(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) cls_rows[static_cast<size_t>(b)] = b * T;
  Tensor cls = bert->forward(in.input_ids, in.attention_mask, in.token_type_ids,
                             in.output_attentions ? &out.attentions : nullptr,
                             from_vector<int64_t>(cls_rows, {B}));
  out.logits = classifier->forward(dropout->forward(bert->pool(cls)));
  if (in.labels.defined()) {
    if (config.num_labels == 1) {
      Tensor target = in.labels.reshape({-1, 1}).to(out.logits.dtype());
      Tensor diff = sub(out.logits, target);
      out.loss = mean(mul(diff, diff));
    } else {
      out.loss = cross_entropy(out.logits, in.labels.reshape({-1}), -100, in.label_smoothing);
    }
  }
  return out;
}

BertForTokenClassification::BertForTokenClassification(const BertConfig& c, uint64_t seed,
                                                       DType dtype) {
  build_classification_head(*this, c, seed, dtype, /*pooler=*/false);
}

ModelOutputs BertForTokenClassification::forward(const ModelInputs& in) const {
  ModelOutputs out;
  Tensor h = bert->forward(in.input_ids, in.attention_mask, in.token_type_ids,
                           in.output_attentions ? &out.attentions : nullptr);
  out.logits = classifier->forward(dropout->forward(h));
  if (in.labels.defined()) out.loss = masked_lm_loss(out.logits, in.labels, in.label_smoothing);
  return out;
}

}  // namespace heed::nn
