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
  double init_std = 0.02;
  double output_init_std = 0.02;  // GPT-2 scales its mlp.c_proj init by 1/sqrt(2 n_layer)
  WeightLayout layout = WeightLayout::out_in;
  DType dtype = DType::f32;
  // Child names: BART's fc1/fc2; BERT's intermediate.dense/output.dense; GPT-2's c_fc/c_proj.
  std::string in_name = "fc1";
  std::string out_name = "fc2";
};

// dropout(out(act(in(x)))): the position-wise feed-forward block.
class FeedForward : public Module {
 public:
  FeedForward(const FeedForwardOptions& options, Generator& init,
              std::shared_ptr<Generator> dropout_generator);
  Tensor forward(const Tensor& x) const;

  FeedForwardOptions options;
  std::shared_ptr<Linear> in_proj, out_proj;
  std::shared_ptr<Dropout> dropout;
};

}  // namespace heed::nn
