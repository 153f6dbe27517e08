#include "nn/layer_norm.h"

#include "autograd/ops.h"

namespace heed::nn {

LayerNorm::LayerNorm(int64_t dim, double epsilon, DType dtype) : eps(epsilon) {
  HEED_CHECK(dim > 0, "LayerNorm: size must be positive, got {}", dim);
  HEED_CHECK(epsilon > 0, "LayerNorm: eps must be positive, got {}", epsilon);
  weight = register_parameter("weight", ones({dim}, dtype));
  bias = register_parameter("bias", zeros({dim}, dtype));
}

Tensor LayerNorm::forward(const Tensor& x) const {
  return layer_norm(x, weight, bias, eps);
}

}  // namespace heed::nn
