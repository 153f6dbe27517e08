#pragma once
// Stochastic gradient descent as torch.optim.SGD computes it. For each parameter with
// gradient g:
//
//   d <- g + weight_decay * p                       (L2 penalty, coupled, as in PyTorch)
//   b <- d at the first update; else momentum * b + (1 - dampening) * d
//   d <- d + momentum * b with nesterov; else b     (only when momentum != 0)
//   p <- p - lr * d
#include <limits>

#include "optim/optimizer.h"

namespace heed::optim {

struct SGDOptions {
  double lr = std::numeric_limits<double>::quiet_NaN();  // required, as in PyTorch
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};

class SGD : public Optimizer {
 public:
  // Group options are "momentum", "dampening" and "nesterov" (0 or 1).
  SGD(std::vector<ParamGroup> groups, const SGDOptions& defaults);
  SGD(NamedTensors params, const SGDOptions& defaults);

  std::string_view name() const override { return "SGD"; }

 protected:
  void check_hyper_parameters(const ParamGroup& group, const std::string& where) const override;
  std::vector<std::string> state_names(const ParamGroup& group, const Tensor& param) const override;
  void update(const ParamGroup& group, const Tensor& param, const Tensor& grad, double grad_scale,
              ParamState& state) override;
};

}  // namespace heed::optim
