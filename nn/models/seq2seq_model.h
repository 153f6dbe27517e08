#pragma once
// What decoding, the seq2seq task and `infer translate` see of an encoder-decoder: the BART
// layout (encoder_decoder.h) and T5 (t5.h) alike.
#include <cstdint>
#include <optional>
#include <vector>

#include "nn/kv_cache.h"
#include "nn/models/pretrained.h"

namespace heed::nn {

struct Seq2SeqTokens {
  int64_t pad = 0;
  int64_t eos = 0;
  int64_t decoder_start = 0;
  std::optional<int64_t> bos;  // BART's; T5 has none
};

class Seq2SeqModel : public PretrainedModel {
 public:
  // The encoder's last hidden states [B, S, C]; `attentions`, if given, receives each layer's
  // attention probabilities [B, heads, S, S].
  virtual Tensor encode(const Tensor& input_ids, const Tensor& attention_mask = Tensor(),
                        std::vector<Tensor>* attentions = nullptr) const = 0;
  // Decoder logits [B, T, V] for decoder_input_ids attending to `memory`. With a cache
  // (decoding), decoder_input_ids are the positions after the cached ones; the memory is
  // projected into the cache at the first call and reused after, and
  // decoder_attention_mask covers the cached positions too. With `attentions`, each layer's
  // self- and cross-attention probabilities go into its decoder_attentions and
  // cross_attentions.
  virtual Tensor decode(const Tensor& decoder_input_ids, const Tensor& memory,
                        const Tensor& memory_mask = Tensor(),
                        const Tensor& decoder_attention_mask = Tensor(), KVCache* cache = nullptr,
                        ModelOutputs* attentions = nullptr) const = 0;
  virtual Seq2SeqTokens special_tokens() const = 0;
  // The longest source, and target with its decoder start token, the model takes (its position
  // table); a model without one (T5) takes any.
  virtual int64_t max_positions() const = 0;

  // [start, labels[:, :-1]] with -100 replaced by the pad id, as Hugging Face builds the decoder
  // inputs from the labels (BART's shift_tokens_right, T5's _shift_right).
  Tensor shift_tokens_right(const Tensor& labels) const;
  // The loss and logits of ModelInputs (the decoder inputs from the labels when not given),
  // through encode and decode.
  ModelOutputs forward(const ModelInputs& inputs) const override;
};

}  // namespace heed::nn
