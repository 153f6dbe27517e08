#include "nn/models/roberta.h"

#include "autograd/ops.h"

namespace heed::nn {

const EncoderFamily& roberta_family() {
  static const EncoderFamily family{.model_type = "roberta",
                                    .body = "roberta",
                                    .layout = {.positions = PositionIds::kAfterPadding},
                                    .mlm_dense = "lm_head.dense",
                                    .mlm_norm = "lm_head.layer_norm",
                                    .mlm_bias = "lm_head.bias",
                                    .mlm_decoder = "lm_head.decoder",
                                    .mlm_head_uses_hidden_act = false,
                                    .architecture_prefix = "Roberta"};
  return family;
}

RobertaForSequenceClassification::RobertaForSequenceClassification(const BertConfig& c,
                                                                   uint64_t seed, DType dtype) {
  Generator init(seed);
  dropout_generator = std::make_shared<Generator>(seed + 1);
  build_body(c, roberta_family(), init, dtype, /*pooler=*/false);
  dropout = register_module(
      "dropout", std::make_shared<Dropout>(c.classifier_dropout.value_or(c.hidden_dropout_prob),
                                           dropout_generator));
  dense = register_module("classifier.dense",
                          std::make_shared<Linear>(c.hidden_size, c.hidden_size, init, true,
                                                   c.initializer_range, dtype));
  out_proj = register_module("classifier.out_proj",
                             std::make_shared<Linear>(c.hidden_size, c.num_labels, init, true,
                                                      c.initializer_range, dtype));
}

ModelOutputs RobertaForSequenceClassification::forward(const ModelInputs& in) const {
  ModelOutputs out;
  // Only the <s> rows reach the head: the last layer computes them alone after attention.
  Tensor x = bert->forward(in.input_ids, in.attention_mask, in.token_type_ids,
                           in.output_attentions ? &out.attentions : nullptr,
                           first_token_rows(in.input_ids));
  x = tanh(dense->forward(dropout->forward(x)));
  out.logits = out_proj->forward(dropout->forward(x));
  if (in.labels.defined()) {
    out.loss =
        sequence_classification_loss(out.logits, in.labels, config.num_labels, in.label_smoothing);
  }
  return out;
}

}  // namespace heed::nn
