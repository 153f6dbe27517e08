#include "nn/lora_adapter.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "autograd/random.h"

namespace heed::nn {

LoraAdapter::LoraAdapter(int64_t in, int64_t out, const LoraOptions& opts, Generator& init,
                         DType dtype, std::shared_ptr<Generator> dropout_gen)
    : options(opts),
      scaling(opts.alpha / static_cast<double>(opts.r)),
      dropout_generator(std::move(dropout_gen)) {
  HEED_CHECK(opts.r > 0, "LoRA: r must be positive, got {}", opts.r);
  HEED_CHECK(opts.dropout >= 0.0 && opts.dropout < 1.0,
             "LoRA: lora_dropout must be in [0, 1), got {}", opts.dropout);
  HEED_CHECK(dropout_generator != nullptr, "LoRA: needs a dropout generator");
  // kaiming_uniform_(a=sqrt(5)) on [r, in]: gain sqrt(2 / (1 + 5)) times sqrt(3 / in).
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  lora_A = register_parameter("lora_A.weight", uniform({opts.r, in}, init, -bound, bound, dtype));
  lora_B = register_parameter("lora_B.weight", zeros({out, opts.r}, dtype));
}

Tensor LoraAdapter::delta(const Tensor& x, bool training) const {
  const Tensor input =
      options.dropout > 0 ? dropout(x, options.dropout, training, *dropout_generator) : x;
  return mul(linear(linear(input, lora_A), lora_B), scaling);
}

Tensor LoraAdapter::merged_delta() const {
  NoGradGuard no_grad;
  return mul(matmul(lora_B, lora_A), scaling);
}

}  // namespace heed::nn
