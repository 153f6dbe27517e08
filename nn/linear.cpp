#include "nn/linear.h"

#include "autograd/ops.h"
#include "autograd/random.h"

namespace heed::nn {

Linear::Linear(int64_t in_features, int64_t out_features, Generator& init, bool has_bias,
               double init_std, DType dtype) {
  HEED_CHECK(in_features > 0 && out_features > 0, "Linear: sizes must be positive, got {} -> {}",
             in_features, out_features);
  weight =
      register_parameter("weight", randn({out_features, in_features}, init, dtype, 0.0, init_std));
  if (has_bias) bias = register_parameter("bias", zeros({out_features}, dtype));
}

Tensor Linear::forward(const Tensor& x) const {
  return linear(x, weight, bias);
}

}  // namespace heed::nn
