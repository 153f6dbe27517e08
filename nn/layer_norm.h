#pragma once
#include "nn/module.h"

namespace heed::nn {

// Which normalisation: LayerNorm, or T5's RMS norm (x * rsqrt(mean(x^2) + eps) * w: no mean
// taken out, no bias).
enum class NormKind { layer_norm, rms_norm };

// LayerNorm over the last dim; weight 1, bias 0 at init. As an RMS norm it has no bias.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t dim, double eps = 1e-12, DType dtype = DType::f32,
                     NormKind kind = NormKind::layer_norm);
  Tensor forward(const Tensor& x) const;

  Tensor weight;
  Tensor bias;  // undefined for an RMS norm
  double eps;
  NormKind kind;
};

}  // namespace heed::nn
