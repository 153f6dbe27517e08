#pragma once
#include "autograd/generator.h"
#include "nn/module.h"

namespace heed::nn {

// y = x . W^T + b, W as [out, in]. Initialised as Hugging Face initialises Transformers:
// W ~ N(0, init_std), b = 0.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, Generator& init, bool bias = true,
         double init_std = 0.02, DType dtype = DType::f32);
  Tensor forward(const Tensor& x) const;

  Tensor weight;
  Tensor bias;  // undefined without bias
};

}  // namespace heed::nn
