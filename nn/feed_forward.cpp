#include "nn/feed_forward.h"

namespace heed::nn {

FeedForward::FeedForward(const FeedForwardOptions& opts, Generator& init,
                         std::shared_ptr<Generator> dropout_generator)
    : options(opts) {
  in_proj = register_module(
      opts.in_name, std::make_shared<Linear>(opts.hidden_size, opts.intermediate_size, init, true,
                                             opts.init_std, opts.dtype, opts.layout));
  out_proj = register_module(
      opts.out_name, std::make_shared<Linear>(opts.intermediate_size, opts.hidden_size, init, true,
                                              opts.output_init_std, opts.dtype, opts.layout));
  dropout = std::make_shared<Dropout>(opts.dropout, std::move(dropout_generator));
  register_module("dropout", dropout);
}

Tensor FeedForward::forward(const Tensor& x) const {
  Tensor hidden;
  const bool gelu =
      options.activation == Activation::gelu || options.activation == Activation::gelu_tanh;
  if (gelu && in_proj->bias.defined() && !in_proj->lora) {
    // One op: GELU's backward runs inside the projection's bias-gradient pass (which reads the
    // weight alone, so not with a LoRA adapter's update).
    hidden = linear_gelu(x, in_proj->weight, in_proj->bias,
                         options.activation == Activation::gelu_tanh ? GeluApproximation::tanh
                                                                     : GeluApproximation::none,
                         in_proj->layout);
  } else {
    hidden = activate(in_proj->forward(x), options.activation);
  }
  return dropout->forward(out_proj->forward(hidden));
}

}  // namespace heed::nn
