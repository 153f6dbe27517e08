#include "nn/attention.h"

#include <cmath>

#include "autograd/ops.h"

namespace heed::nn {

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& mask, bool causal, double dropout_p,
                                    bool training, Generator* generator, Tensor* probs) {
  HEED_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4 && q.size(-1) == k.size(-1) &&
                 k.size(-2) == v.size(-2),
             "attention: q {}, k {}, v {} must be [B, h, T, d] with matching d and key length",
             q.shape_str(), k.shape_str(), v.shape_str());
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  // k^T is a strided view: the product reads it in place.
  Tensor scores = matmul(q, k.transpose(-1, -2));
  Tensor p = attention_softmax(scores, scale, mask, causal);
  if (probs) *probs = p;
  if (training && dropout_p > 0.0) {
    HEED_CHECK(generator != nullptr, "attention: dropout needs a generator");
    p = dropout(p, dropout_p, true, *generator);
  }
  return matmul(p, v);
}

Tensor padding_mask_for_attention(const Tensor& attention_mask) {
  HEED_CHECK(attention_mask.dim() == 2, "attention: padding mask must be [B, T], got {}",
             attention_mask.shape_str());
  const int64_t B = attention_mask.size(0), T = attention_mask.size(1);
  Tensor keep = attention_mask.dtype() == DType::u8 ? attention_mask : attention_mask.to(DType::u8);
  return keep.reshape({B, 1, 1, T});
}

MultiHeadAttention::MultiHeadAttention(int64_t embed, int64_t heads, Generator& init,
                                       std::shared_ptr<Generator> dropout_gen, double dropout_p,
                                       bool bias, double init_std, DType dtype,
                                       const AttentionNames& names)
    : embed_dim(embed),
      num_heads(heads),
      head_dim(heads > 0 ? embed / heads : 0),
      attention_dropout(dropout_p),
      dropout_generator(std::move(dropout_gen)) {
  HEED_CHECK(heads > 0 && embed % heads == 0,
             "MultiHeadAttention: {} heads do not divide the hidden size {}", heads, embed);
  HEED_CHECK(dropout_p >= 0.0 && dropout_p < 1.0,
             "MultiHeadAttention: dropout must be in [0, 1), got {}", dropout_p);
  q_proj = register_module(names.query,
                           std::make_shared<Linear>(embed, embed, init, bias, init_std, dtype));
  k_proj = register_module(names.key,
                           std::make_shared<Linear>(embed, embed, init, bias, init_std, dtype));
  v_proj = register_module(names.value,
                           std::make_shared<Linear>(embed, embed, init, bias, init_std, dtype));
  out_proj = register_module(names.output,
                             std::make_shared<Linear>(embed, embed, init, bias, init_std, dtype));
}

AttentionOutput MultiHeadAttention::forward(const Tensor& query, const Tensor& key_value,
                                            const Tensor& key_padding_mask, bool causal,
                                            bool need_weights) const {
  const Tensor& kv = key_value.defined() ? key_value : query;
  HEED_CHECK(query.dim() == 3 && query.size(-1) == embed_dim && kv.dim() == 3 &&
                 kv.size(-1) == embed_dim && kv.size(0) == query.size(0),
             "MultiHeadAttention: query {} and key/value {} must be [B, T, {}]", query.shape_str(),
             kv.shape_str(), embed_dim);
  const int64_t B = query.size(0), Tq = query.size(1), Tk = kv.size(1);
  Tensor mask;
  if (key_padding_mask.defined()) {
    HEED_CHECK(key_padding_mask.dim() == 2 && key_padding_mask.size(0) == B &&
                   key_padding_mask.size(1) == Tk,
               "MultiHeadAttention: padding mask {} must be [B, Tk] = [{}, {}]",
               key_padding_mask.shape_str(), B, Tk);
    mask = padding_mask_for_attention(key_padding_mask);
  }
  // [B, T, C] -> [B, T, h, d] -> [B, h, T, d]: views, no copies.
  auto heads = [&](const Tensor& x, int64_t T) {
    return x.reshape({B, T, num_heads, head_dim}).permute({0, 2, 1, 3});
  };
  Tensor q = heads(q_proj->forward(query), Tq);
  Tensor k = heads(k_proj->forward(kv), Tk);
  Tensor v = heads(v_proj->forward(kv), Tk);
  AttentionOutput out;
  Tensor context =
      scaled_dot_product_attention(q, k, v, mask, causal, attention_dropout, is_training(),
                                   dropout_generator.get(), need_weights ? &out.probs : nullptr);
  // [B, h, Tq, d] -> [B, Tq, h, d] -> [B, Tq, C]
  Tensor merged = context.permute({0, 2, 1, 3}).reshape({B, Tq, embed_dim});
  out.output = out_proj->forward(merged);
  return out;
}

}  // namespace heed::nn
