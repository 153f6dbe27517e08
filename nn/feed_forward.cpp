#include "nn/feed_forward.h"

namespace heed::nn {

FeedForward::FeedForward(const FeedForwardOptions& opts, Generator& init,
                         std::shared_ptr<Generator> dropout_generator)
    : options(opts) {
  auto projection = [&](int64_t in, int64_t out, double std) {
    return std::make_shared<Linear>(in, out, init, opts.bias, std, opts.dtype, opts.layout);
  };
  in_proj = register_module(opts.in_name,
                            projection(opts.hidden_size, opts.intermediate_size, opts.init_std));
  if (opts.gated) {
    HEED_CHECK(!opts.gate_name.empty(), "FeedForward: a gated block needs its gate's name");
    gate_proj = register_module(
        opts.gate_name, projection(opts.hidden_size, opts.intermediate_size, opts.init_std));
  }
  out_proj = register_module(
      opts.out_name, projection(opts.intermediate_size, opts.hidden_size, opts.output_init_std));
  activation_dropout = register_module(
      "activation_dropout", std::make_shared<Dropout>(opts.activation_dropout, dropout_generator));
  dropout = register_module("dropout",
                            std::make_shared<Dropout>(opts.dropout, std::move(dropout_generator)));
}

Tensor FeedForward::forward(const Tensor& x) const {
  Tensor hidden;
  const bool gelu =
      options.activation == Activation::gelu || options.activation == Activation::gelu_tanh;
  if (gelu && in_proj->bias.defined() && !in_proj->lora && !gate_proj) {
    // One op: GELU's backward runs inside the projection's bias-gradient pass (which reads the
    // weight alone, so not with a LoRA adapter's update).
    hidden = linear_gelu(x, in_proj->weight, in_proj->bias,
                         options.activation == Activation::gelu_tanh ? GeluApproximation::tanh
                                                                     : GeluApproximation::none,
                         in_proj->layout);
  } else {
    hidden = activate(in_proj->forward(x), options.activation);
  }
  if (gate_proj) hidden = mul(hidden, gate_proj->forward(x));
  return dropout->forward(out_proj->forward(activation_dropout->forward(hidden)));
}

}  // namespace heed::nn
