#pragma once
// AdamW exactly as torch.optim.AdamW computes it (Loshchilov & Hutter, decoupled weight
// decay). For each parameter with gradient g, at its update t = 1, 2, ...:
//
//   p <- p * (1 - lr * weight_decay)
//   m <- beta1 * m + (1 - beta1) * g
//   v <- beta2 * v + (1 - beta2) * g^2
//   p <- p - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
//
// eps is added after the bias-corrected square root (Hugging Face's legacy AdamW adds it to
// the raw sqrt(v) and decays after the update: not this). With amsgrad, the running maximum
// of v replaces v in the denominator.
#include "optim/optimizer.h"

namespace heed::optim {

struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
};

class AdamW : public Optimizer {
 public:
  // Groups take `defaults` for what they leave unset; group options are "beta1", "beta2",
  // "eps" and "amsgrad" (0 or 1).
  AdamW(std::vector<ParamGroup> groups, const AdamWOptions& defaults = {});
  // One group holding every parameter.
  AdamW(NamedTensors params, const AdamWOptions& defaults = {});

  std::string_view name() const override { return "AdamW"; }

 protected:
  void check_hyper_parameters(const ParamGroup& group, const std::string& where) const override;
  std::vector<std::string> state_names(const ParamGroup& group, const Tensor& param) const override;
  void update(const ParamGroup& group, const Tensor& param, const Tensor& grad, double grad_scale,
              ParamState& state) override;
};

}  // namespace heed::optim
