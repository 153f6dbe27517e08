#include "nn/models/seq2seq_model.h"

#include "autograd/ops.h"

namespace heed::nn {

Tensor Seq2SeqModel::shift_tokens_right(const Tensor& labels) const {
  HEED_CHECK(labels.dim() == 2, "{}: labels must be [B, T], got {}", model_type(),
             labels.shape_str());
  const Seq2SeqTokens tokens = special_tokens();
  std::vector<int64_t> v = labels.to_vector<int64_t>();
  const int64_t B = labels.size(0), T = labels.size(1);
  std::vector<int64_t> shifted(B * T);
  for (int64_t b = 0; b < B; ++b) {
    shifted[b * T] = tokens.decoder_start;
    for (int64_t t = 1; t < T; ++t) {
      const int64_t id = v[b * T + t - 1];
      shifted[b * T + t] = id == -100 ? tokens.pad : id;
    }
  }
  return from_vector<int64_t>(shifted, {B, T});
}

ModelOutputs Seq2SeqModel::forward(const ModelInputs& in) const {
  Tensor decoder_ids = in.decoder_input_ids;
  if (!decoder_ids.defined()) {
    HEED_CHECK(in.labels.defined(), "{}: needs decoder_input_ids or labels", model_type());
    decoder_ids = shift_tokens_right(in.labels);
  }
  ModelOutputs out;
  Tensor memory =
      encode(in.input_ids, in.attention_mask, in.output_attentions ? &out.attentions : nullptr);
  out.logits = decode(decoder_ids, memory, in.attention_mask, in.decoder_attention_mask, nullptr,
                      in.output_attentions ? &out : nullptr);
  if (in.labels.defined()) {
    const int64_t V = out.logits.size(-1);
    out.loss = cross_entropy(out.logits.reshape({-1, V}), in.labels.reshape({-1}), -100,
                             in.label_smoothing);
  }
  return out;
}

}  // namespace heed::nn
