#pragma once
#include <memory>
#include <string>

#include "nn/activation.h"
#include "nn/dropout.h"
#include "nn/linear.h"

namespace heed::nn {

struct FeedForwardOptions {
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  Activation activation = Activation::gelu;
  double dropout = 0.0;  // after the output projection
  // On the activations, before the output projection (T5's DenseReluDense).
  double activation_dropout = 0.0;
  bool bias = true;
  // Gated (T5 v1.1's gated-gelu): act(in(x)) * gate(x) in place of act(in(x)).
  bool gated = false;
  double init_std = 0.02;
  double output_init_std = 0.02;  // GPT-2 scales its mlp.c_proj init by 1/sqrt(2 n_layer)
  WeightLayout layout = WeightLayout::out_in;
  DType dtype = DType::f32;
  // Child names: BART's fc1/fc2; BERT's intermediate.dense/output.dense; GPT-2's c_fc/c_proj.
  std::string in_name = "fc1";
  std::string out_name = "fc2";
  std::string gate_name = "";  // with `gated`: T5's wi_1 (in_name is then wi_0)
};

// dropout(out(activation_dropout(act(in(x)) [* gate(x)]))): the position-wise feed-forward block.
class FeedForward : public Module {
 public:
  FeedForward(const FeedForwardOptions& options, Generator& init,
              std::shared_ptr<Generator> dropout_generator);
  Tensor forward(const Tensor& x) const;

  FeedForwardOptions options;
  std::shared_ptr<Linear> in_proj, out_proj;
  std::shared_ptr<Linear> gate_proj;  // null unless gated
  std::shared_ptr<Dropout> activation_dropout, dropout;
};

}  // namespace heed::nn
