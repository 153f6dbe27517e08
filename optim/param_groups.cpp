#include "optim/param_groups.h"

namespace heed::optim {

bool is_no_decay_parameter(const std::string& name, const Tensor& param) {
  return param.dim() < 2 || name.ends_with("bias");
}

std::vector<ParamGroup> weight_decay_groups(const NamedTensors& params, double weight_decay) {
  ParamGroup decay, no_decay;
  decay.weight_decay = weight_decay;
  no_decay.weight_decay = 0.0;
  for (const auto& [name, p] : params) {
    (is_no_decay_parameter(name, p) ? no_decay : decay).params.emplace_back(name, p);
  }
  return {std::move(decay), std::move(no_decay)};
}

}  // namespace heed::optim
