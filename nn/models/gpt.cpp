#include "nn/models/gpt.h"

#include <cmath>

#include "autograd/ops.h"
#include "nn/fused_loss.h"
#include "nn/models/config_json.h"

namespace heed::nn {

nlohmann::json GPT::config_json() const {
  nlohmann::json j = to_json(config);
  j["architectures"] = {architecture()};
  return j;
}

bool GPT::ignores_checkpoint_name(const std::string& name) const {
  // attn.bias / attn.masked_bias are the causal-mask buffers of older checkpoints;
  // lm_head.weight is the tied token embedding table.
  auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return name == "lm_head.weight" || ends_with(".attn.bias") || ends_with(".attn.masked_bias");
}

GPT::GPT(const GPT2Config& c, uint64_t seed, DType dtype) : config(c) {
  c.validate();
  Generator init(seed);
  dropout_generator = std::make_shared<Generator>(seed + 1);
  // GPT-2 scales the init of each residual branch's output projection by 1/sqrt(2 n_layer).
  const double proj_std = c.initializer_range / std::sqrt(2.0 * c.n_layer);
  wte = register_module(
      "transformer.wte",
      std::make_shared<Embedding>(c.vocab_size, c.n_embd, init, -1, c.initializer_range, dtype));
  wpe = register_module(
      "transformer.wpe",
      std::make_shared<Embedding>(c.n_positions, c.n_embd, init, -1, c.initializer_range, dtype));
  drop = register_module("transformer.drop",
                         std::make_shared<Dropout>(c.embd_pdrop, dropout_generator));
  LayerOptions o;
  o.attention = {.embed_dim = c.n_embd,
                 .num_heads = c.n_head,
                 .dropout = c.attn_pdrop,
                 .init_std = c.initializer_range,
                 .output_init_std = proj_std,
                 .fused_qkv = true,
                 .layout = WeightLayout::in_out,
                 .dtype = dtype,
                 .names = {.query = "c_attn", .output = "c_proj"}};
  o.feed_forward = {.hidden_size = c.n_embd,
                    .intermediate_size = c.inner_size(),
                    .activation = parse_activation(c.activation_function),
                    .dropout = c.resid_pdrop,
                    .init_std = c.initializer_range,
                    .output_init_std = proj_std,
                    .layout = WeightLayout::in_out,
                    .dtype = dtype,
                    .in_name = "c_fc",
                    .out_name = "c_proj"};
  o.norm_first = true;
  o.layer_norm_eps = c.layer_norm_epsilon;
  o.hidden_dropout = c.resid_pdrop;
  o.names = {.self_attention = "attn",
             .self_attention_norm = "ln_1",
             .feed_forward = "mlp",
             .final_norm = "ln_2"};
  for (int64_t i = 0; i < c.n_layer; ++i) {
    blocks.push_back(register_module("transformer.h." + std::to_string(i),
                                     std::make_shared<EncoderLayer>(o, init, dropout_generator)));
  }
  ln_f = register_module("transformer.ln_f",
                         std::make_shared<LayerNorm>(c.n_embd, c.layer_norm_epsilon, dtype));
}

Tensor GPT::hidden_states(const Tensor& input_ids, const Tensor& attention_mask, KVCache* cache,
                          std::vector<Tensor>* attentions) const {
  HEED_CHECK(input_ids.dim() == 2, "GPT: input_ids must be [B, T], got {}", input_ids.shape_str());
  const int64_t past = cache ? cache->length() : 0, T = input_ids.size(1);
  HEED_CHECK(past + T <= config.n_positions,
             "GPT: sequence of {} tokens is longer than n_positions {}", past + T,
             config.n_positions);
  if (cache) cache->self_attention.resize(blocks.size());
  Tensor h = drop->forward(add(wte->forward(input_ids), wpe->forward(arange(past, past + T))));
  const Tensor mask = keep_mask(attention_mask);
  for (size_t i = 0; i < blocks.size(); ++i) {
    Tensor probs;
    h = blocks[i]->forward(h, {.padding_mask = mask,
                               .causal = true,
                               .attention_probs = attentions ? &probs : nullptr,
                               .cache = cache ? &cache->self_attention[i] : nullptr});
    if (attentions) attentions->push_back(probs);
  }
  return ln_f->forward(h);
}

Tensor GPT::forward_cached(const Tensor& input_ids, KVCache& cache,
                           const Tensor& attention_mask) const {
  return linear(hidden_states(input_ids, attention_mask, &cache), wte->weight);
}

ModelOutputs GPT::forward(const ModelInputs& in) const {
  ModelOutputs out;
  Tensor h = hidden_states(in.input_ids, in.attention_mask, nullptr,
                           in.output_attentions ? &out.attentions : nullptr);
  if (in.labels.defined() && in.head_outputs != HeadOutputs::logits) {
    HEED_CHECK(in.labels.shape() == in.input_ids.shape(), "GPT: labels {} must match input_ids {}",
               in.labels.shape_str(), in.input_ids.shape_str());
    // The head (tied to wte) and the loss as one op, over chunks of rows.
    out.loss = fused_linear_cross_entropy(
        h, wte->weight, in.labels,
        {.label_smoothing = in.label_smoothing,
         .predictions = in.head_outputs == HeadOutputs::predictions ? &out.predictions : nullptr});
    return out;
  }
  out.logits = linear(h, wte->weight);  // the LM head is tied to wte
  if (in.labels.defined()) {
    const int64_t B = out.logits.size(0), T = out.logits.size(1), V = out.logits.size(2);
    HEED_CHECK(in.labels.shape() == Shape({B, T}), "GPT: labels {} must match input_ids [{}, {}]",
               in.labels.shape_str(), B, T);
    // labels[t] is the token after position t: the causal-LM collator shifted them, so that
    // one place owns the shift (Hugging Face's GPT-2 takes the ids and shifts inside).
    out.loss = cross_entropy(out.logits.reshape({-1, V}), in.labels.reshape({-1}), -100,
                             in.label_smoothing);
  }
  return out;
}

}  // namespace heed::nn
