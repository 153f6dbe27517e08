#include "nn/linear.h"

#include "autograd/random.h"

namespace heed::nn {

Linear::Linear(int64_t in, int64_t out, Generator& init, bool has_bias, double init_std,
               DType dtype, WeightLayout weight_layout)
    : in_features(in), out_features(out), layout(weight_layout) {
  HEED_CHECK(in > 0 && out > 0, "Linear: sizes must be positive, got {} -> {}", in, out);
  const Shape shape = layout == WeightLayout::out_in ? Shape{out, in} : Shape{in, out};
  weight = register_parameter("weight", randn(shape, init, dtype, 0.0, init_std));
  if (has_bias) bias = register_parameter("bias", zeros({out}, dtype));
}

Tensor Linear::forward(const Tensor& x) const {
  Tensor y = linear(x, weight, bias, layout);
  return lora ? add(y, lora->delta(x, is_training())) : y;
}

}  // namespace heed::nn
