#pragma once
#include "nn/module.h"

namespace heed::nn {

// LayerNorm over the last dim; weight 1, bias 0 at init.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t dim, double eps = 1e-12, DType dtype = DType::f32);
  Tensor forward(const Tensor& x) const;

  Tensor weight;
  Tensor bias;
  double eps;
};

}  // namespace heed::nn
