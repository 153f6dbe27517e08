#include "nn/layer_norm.h"

#include "autograd/ops.h"

namespace heed::nn {

LayerNorm::LayerNorm(int64_t dim, double epsilon, DType dtype, NormKind norm_kind)
    : eps(epsilon), kind(norm_kind) {
  HEED_CHECK(dim > 0, "LayerNorm: size must be positive, got {}", dim);
  HEED_CHECK(epsilon > 0, "LayerNorm: eps must be positive, got {}", epsilon);
  weight = register_parameter("weight", ones({dim}, dtype));
  if (kind == NormKind::layer_norm) bias = register_parameter("bias", zeros({dim}, dtype));
}

Tensor LayerNorm::forward(const Tensor& x) const {
  if (kind == NormKind::rms_norm) return rms_norm(x, weight, eps);
  return layer_norm(x, weight, bias, eps);
}

}  // namespace heed::nn
