#include "nn/models/bert.h"

#include "autograd/ops.h"
#include "nn/fused_loss.h"
#include "nn/labelled_rows.h"
#include "nn/models/config_json.h"
#include "nn/positional.h"
#include "nn/relative_positions.h"

namespace heed::nn {

namespace {

LayerOptions bert_layer_options(const BertConfig& c, DType dtype, const EncoderLayout& layout) {
  LayerOptions o;
  o.attention = {.embed_dim = c.hidden_size,
                 .num_heads = c.num_attention_heads,
                 .dropout = c.attention_probs_dropout_prob,
                 .init_std = c.initializer_range,
                 .output_init_std = c.initializer_range,
                 .dtype = dtype,
                 .names = layout.attention_names,
                 .relative_positions = relative_positions_of(c.position_embedding_type),
                 .max_positions = c.max_position_embeddings};
  o.feed_forward = {.hidden_size = c.hidden_size,
                    .intermediate_size = c.intermediate_size,
                    .activation = parse_activation(c.hidden_act),
                    .dropout = c.hidden_dropout_prob,
                    .init_std = c.initializer_range,
                    .output_init_std = c.initializer_range,
                    .dtype = dtype,
                    .in_name = layout.ffn_in,
                    .out_name = layout.ffn_out};
  o.norm_first = false;
  o.layer_norm_eps = c.layer_norm_eps;
  o.hidden_dropout = layout.attention_output_dropout ? c.hidden_dropout_prob : 0.0;
  o.names = {.self_attention = layout.attention,
             .self_attention_norm = layout.attention_norm,
             .feed_forward = layout.feed_forward,
             .final_norm = layout.final_norm};
  return o;
}

Tensor masked_lm_loss(const Tensor& logits, const Tensor& labels, double label_smoothing) {
  const int64_t classes = logits.size(-1);
  return cross_entropy(logits.reshape({-1, classes}), labels.reshape({-1}), -100, label_smoothing);
}

}  // namespace

Tensor encoder_position_ids(const Tensor& input_ids, PositionIds scheme, int64_t pad_token_id,
                            int64_t max_positions) {
  const int64_t B = input_ids.size(0), T = input_ids.size(1);
  if (scheme == PositionIds::kFromZero) {
    HEED_CHECK(T <= max_positions,
               "sequence of {} tokens is longer than max_position_embeddings {}", T, max_positions);
    return arange(0, T);
  }
  const std::vector<int64_t> ids = input_ids.to(DType::i64).contiguous().to_vector<int64_t>();
  std::vector<int64_t> positions(ids.size());
  int64_t highest = pad_token_id;
  for (int64_t b = 0; b < B; ++b) {
    int64_t real = 0;
    for (int64_t t = 0; t < T; ++t) {
      const size_t i = static_cast<size_t>(b * T + t);
      positions[i] = ids[i] == pad_token_id ? pad_token_id : pad_token_id + ++real;
      highest = std::max(highest, positions[i]);
    }
  }
  HEED_CHECK(highest < max_positions,
             "sequence of {} tokens needs position {} (RoBERTa's count from pad_token_id {} + 1), "
             "past max_position_embeddings {}",
             T, highest, pad_token_id, max_positions);
  return from_vector<int64_t>(positions, {B, T});
}

const EncoderFamily& bert_family() {
  static const EncoderFamily family{.model_type = "bert",
                                    .body = "bert",
                                    .layout = {},
                                    .mlm_dense = "cls.predictions.transform.dense",
                                    .mlm_norm = "cls.predictions.transform.LayerNorm",
                                    .mlm_bias = "cls.predictions.bias",
                                    .mlm_decoder = "cls.predictions.decoder",
                                    .mlm_head_uses_hidden_act = true,
                                    .architecture_prefix = "Bert"};
  return family;
}

nlohmann::json BertBase::config_json() const {
  nlohmann::json j = to_json(config);
  j["model_type"] = family.model_type;
  j["architectures"] = {architecture()};
  return j;
}

bool BertBase::ignores_checkpoint_name(const std::string& name) const {
  // position_ids and token_type_ids are buffers of some checkpoints; the decoder weight is the
  // tied word embedding table; seq_relationship is the next-sentence head of
  // BertForPreTraining. A head without a pooler skips the pooler that base checkpoints carry
  // (bert-base-uncased, roberta-base), as Hugging Face's masked-LM and token heads do
  // (_keys_to_ignore_on_load_unexpected = [r"pooler"]).
  const std::string& body = family.body;
  const bool unused_pooler = bert->pooler == nullptr &&
                             (name.starts_with(body + ".pooler.") || name.starts_with("pooler."));
  return name == body + ".embeddings.position_ids" || name == "embeddings.position_ids" ||
         name == body + ".embeddings.token_type_ids" || name == "embeddings.token_type_ids" ||
         name == family.mlm_decoder + ".weight" || name.rfind("cls.seq_relationship.", 0) == 0 ||
         unused_pooler;
}

std::string BertBase::canonical_checkpoint_name(const std::string& name) const {
  if (name == family.mlm_decoder + ".bias") return family.mlm_bias;  // an alias
  return PretrainedModel::canonical_checkpoint_name(name);
}

void BertBase::build_body(const BertConfig& c, const EncoderFamily& f, Generator& init, DType dtype,
                          bool pooler) {
  config = c;
  family = f;
  bert = register_module(
      f.body, std::make_shared<BertModel>(c, init, dropout_generator, pooler, dtype, f.layout));
}

Tensor sequence_classification_loss(const Tensor& logits, const Tensor& labels, int64_t num_labels,
                                    double label_smoothing) {
  if (num_labels == 1) {
    Tensor target = labels.reshape({-1, 1}).to(logits.dtype());
    Tensor diff = sub(logits, target);
    return mean(mul(diff, diff));
  }
  return cross_entropy(logits, labels.reshape({-1}), -100, label_smoothing);
}

BertEmbeddings::BertEmbeddings(const BertConfig& c, Generator& init,
                               std::shared_ptr<Generator> dropout_gen, DType dtype,
                               const EncoderLayout& layout)
    : max_positions(c.max_position_embeddings),
      pad_token_id(c.pad_token_id),
      positions(layout.positions),
      position_embedding_type(c.position_embedding_type) {
  word_embeddings = register_module(
      "word_embeddings", std::make_shared<Embedding>(c.vocab_size, c.hidden_size, init,
                                                     c.pad_token_id, c.initializer_range, dtype));
  // With relative positions the table exists, as in Hugging Face's files, but is not added.
  if (c.position_embedding_type != "sinusoidal") {
    // RoBERTa's table has a padding row, as its position ids put padding there.
    const int64_t padding_row = positions == PositionIds::kAfterPadding ? c.pad_token_id : -1;
    position_embeddings =
        register_module("position_embeddings",
                        std::make_shared<Embedding>(c.max_position_embeddings, c.hidden_size, init,
                                                    padding_row, c.initializer_range, dtype));
  } else {
    sinusoidal_table = sinusoidal_positions(c.max_position_embeddings, c.hidden_size, dtype);
    if (layout.sinusoidal_table_in_checkpoint) {
      register_buffer("position_embeddings.weight", sinusoidal_table);
    }
  }
  if (layout.token_types) {
    token_type_embeddings = register_module(
        "token_type_embeddings", std::make_shared<Embedding>(c.type_vocab_size, c.hidden_size, init,
                                                             -1, c.initializer_range, dtype));
  }
  layer_norm = register_module("LayerNorm",
                               std::make_shared<LayerNorm>(c.hidden_size, c.layer_norm_eps, dtype));
  dropout = register_module(
      "dropout", std::make_shared<Dropout>(c.hidden_dropout_prob, std::move(dropout_gen)));
}

Tensor BertEmbeddings::forward(const Tensor& input_ids, const Tensor& token_type_ids) const {
  HEED_CHECK(input_ids.dim() == 2, "BERT: input_ids must be [B, T], got {}", input_ids.shape_str());
  const Tensor ids = encoder_position_ids(input_ids, positions, pad_token_id, max_positions);
  Tensor x = word_embeddings->forward(input_ids);
  if (sinusoidal_table.defined()) {
    // The fixed table's rows are picked as the learned one's (a [T, C] slice broadcasts).
    x = add(x, positions == PositionIds::kFromZero ? sinusoidal_table.slice(0, 0, ids.size(0))
                                                   : embedding(sinusoidal_table, ids));
  } else if (relative_positions_of(position_embedding_type) == RelativePositions::kNone) {
    x = add(x, position_embeddings->forward(ids));
  }
  if (token_type_embeddings) {
    Tensor types = token_type_ids.defined() ? token_type_ids : zeros(input_ids.shape(), DType::i64);
    x = add(x, token_type_embeddings->forward(types));
  }
  return dropout->forward(layer_norm->forward(x));
}

BertModel::BertModel(const BertConfig& c, Generator& init, std::shared_ptr<Generator> dropout_gen,
                     bool add_pooling_layer, DType dtype, const EncoderLayout& layout_)
    : config(c), layout(layout_) {
  c.validate();
  embeddings = register_module(
      "embeddings", std::make_shared<BertEmbeddings>(c, init, dropout_gen, dtype, layout));
  const LayerOptions options = bert_layer_options(c, dtype, layout);
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    layers.push_back(register_module(layout.layers + std::to_string(i),
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

BertForMaskedLM::BertForMaskedLM(const BertConfig& c, uint64_t seed, DType dtype,
                                 const EncoderFamily& f) {
  Generator init(seed);
  dropout_generator = std::make_shared<Generator>(seed + 1);
  build_body(c, f, init, dtype, /*pooler=*/false);
  transform =
      register_module(f.mlm_dense, std::make_shared<Linear>(c.hidden_size, c.hidden_size, init,
                                                            true, c.initializer_range, dtype));
  transform_norm = register_module(
      f.mlm_norm, std::make_shared<LayerNorm>(c.hidden_size, c.layer_norm_eps, dtype));
  decoder_bias = register_parameter(f.mlm_bias, zeros({c.vocab_size}, dtype));
}

Tensor BertForMaskedLM::head(const Tensor& h) const {
  const Activation act =
      family.mlm_head_uses_hidden_act ? parse_activation(config.hidden_act) : Activation::gelu;
  return transform_norm->forward(activate(transform->forward(h), act));
}

ModelOutputs BertForMaskedLM::forward(const ModelInputs& in) const {
  if (in.output_rows.defined()) return forward_rows(in);
  if (in.only_labeled_logits && in.labels.defined()) return forward_labelled(in);
  ModelOutputs out;
  Tensor h = head(bert->forward(in.input_ids, in.attention_mask, in.token_type_ids,
                                in.output_attentions ? &out.attentions : nullptr));
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
  picked = head(picked);
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

ModelOutputs BertForMaskedLM::forward_rows(const ModelInputs& in) const {
  ModelOutputs out;
  out.hidden_states =
      bert->forward(in.input_ids, in.attention_mask, in.token_type_ids,
                    in.output_attentions ? &out.attentions : nullptr, in.output_rows);
  out.logits =
      linear(head(out.hidden_states), bert->embeddings->word_embeddings->weight, decoder_bias);
  if (in.labels.defined()) {
    out.labels = labels_at_rows(in.labels, in.output_rows);
    out.loss = cross_entropy(out.logits, out.labels, -100, in.label_smoothing);
  }
  return out;
}

// The body both classification heads share: the encoder (with or without the pooler), the
// dropout before the classifier (classifier_dropout, else hidden_dropout_prob), the classifier.
template <typename Head>
void BertBase::build_classification_head(Head& head, const BertConfig& c, uint64_t seed,
                                         DType dtype, bool pooler, const EncoderFamily& family) {
  Generator init(seed);
  head.dropout_generator = std::make_shared<Generator>(seed + 1);
  head.build_body(c, family, init, dtype, pooler);
  head.dropout = head.register_module(
      "dropout", std::make_shared<Dropout>(c.classifier_dropout.value_or(c.hidden_dropout_prob),
                                           head.dropout_generator));
  head.classifier = head.register_module(
      "classifier", std::make_shared<Linear>(c.hidden_size, c.num_labels, init, true,
                                             c.initializer_range, dtype));
}

Tensor first_token_rows(const Tensor& input_ids) {
  HEED_CHECK(input_ids.dim() == 2, "input_ids must be [B, T], got {}", input_ids.shape_str());
  const int64_t B = input_ids.size(0), T = input_ids.size(1);
  std::vector<int64_t> rows(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) rows[static_cast<size_t>(b)] = b * T;
  return from_vector<int64_t>(rows, {B});
}

BertForSequenceClassification::BertForSequenceClassification(const BertConfig& c, uint64_t seed,
                                                             DType dtype) {
  build_classification_head(*this, c, seed, dtype, /*pooler=*/true, bert_family());
}

ModelOutputs BertForSequenceClassification::forward(const ModelInputs& in) const {
  ModelOutputs out;
  // Only the [CLS] rows reach the head: the last layer computes them alone after attention.
  Tensor cls = bert->forward(in.input_ids, in.attention_mask, in.token_type_ids,
                             in.output_attentions ? &out.attentions : nullptr,
                             first_token_rows(in.input_ids));
  out.logits = classifier->forward(dropout->forward(bert->pool(cls)));
  if (in.labels.defined()) {
    out.loss =
        sequence_classification_loss(out.logits, in.labels, config.num_labels, in.label_smoothing);
  }
  return out;
}

BertForTokenClassification::BertForTokenClassification(const BertConfig& c, uint64_t seed,
                                                       DType dtype, const EncoderFamily& family) {
  build_classification_head(*this, c, seed, dtype, /*pooler=*/false, family);
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
