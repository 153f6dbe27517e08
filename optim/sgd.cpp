#include "optim/sgd.h"

#include <cmath>

#include "autograd/kernels/parallel.h"
#include "base/error.h"

namespace heed::optim {

namespace {

ParamGroup sgd_defaults(const SGDOptions& o) {
  ParamGroup d;
  d.lr = o.lr;
  d.weight_decay = o.weight_decay;
  d.options = {
      {"momentum", o.momentum}, {"dampening", o.dampening}, {"nesterov", o.nesterov ? 1.0 : 0.0}};
  return d;
}

template <typename T>
void sgd_update(const Tensor& param, const Tensor& grad, double grad_scale, ParamState& state,
                const ParamGroup& group) {
  const T lr = static_cast<T>(*group.lr), wd = static_cast<T>(*group.weight_decay);
  const T momentum = static_cast<T>(group.option("momentum"));
  const T one_minus_dampening = static_cast<T>(1.0 - group.option("dampening"));
  const bool nesterov = group.option("nesterov") != 0.0;
  const bool use_momentum = group.option("momentum") != 0.0;
  // PyTorch's first momentum step copies d into the buffer instead of blending it in.
  const bool first = !state.tensors.count("momentum_buffer");
  T* buf = nullptr;
  if (use_momentum) {
    Tensor& b = state.tensors["momentum_buffer"];
    if (!b.defined()) b = zeros_like(param);
    buf = b.data<T>();
  }
  T* p = param.data<T>();
  const T* g = grad.data<T>();
  const T scale = static_cast<T>(grad_scale);

  constexpr int64_t kBlock = 4096;
  const int64_t n = param.numel();
  parallel_for((n + kBlock - 1) / kBlock, kBlock * 3, [&](int64_t blk) {
    const int64_t begin = blk * kBlock, end = std::min(n, begin + kBlock);
    for (int64_t i = begin; i < end; ++i) {
      T d = g[i] * scale;
      if (wd != T(0)) d = d + wd * p[i];
      if (use_momentum) {
        const T b = first ? d : buf[i] * momentum + one_minus_dampening * d;
        buf[i] = b;
        d = nesterov ? d + momentum * b : b;
      }
      p[i] = p[i] - lr * d;
    }
  });
}

}  // namespace

SGD::SGD(std::vector<ParamGroup> groups, const SGDOptions& defaults)
    : Optimizer(std::move(groups), sgd_defaults(defaults)) {
  check_all_groups();
}

SGD::SGD(NamedTensors params, const SGDOptions& defaults)
    : SGD(std::vector<ParamGroup>{ParamGroup{std::move(params), {}, {}, {}}}, defaults) {}

void SGD::check_hyper_parameters(const ParamGroup& group, const std::string& where) const {
  const double momentum = group.option("momentum"), dampening = group.option("dampening");
  const double nesterov = group.option("nesterov");
  HEED_CHECK(!std::isnan(*group.lr), "SGD {}: lr is required", where);
  HEED_CHECK(*group.lr >= 0.0, "SGD {}: lr must be >= 0, got {}", where, *group.lr);
  HEED_CHECK(momentum >= 0.0, "SGD {}: momentum must be >= 0, got {}", where, momentum);
  HEED_CHECK(*group.weight_decay >= 0.0, "SGD {}: weight_decay must be >= 0, got {}", where,
             *group.weight_decay);
  HEED_CHECK(nesterov == 0.0 || nesterov == 1.0, "SGD {}: nesterov must be 0 or 1, got {}", where,
             nesterov);
  HEED_CHECK(nesterov == 0.0 || (momentum > 0.0 && dampening == 0.0),
             "SGD {}: nesterov momentum requires momentum > 0 and dampening 0", where);
}

std::vector<std::string> SGD::state_names(const ParamGroup& group, const Tensor& /*param*/) const {
  if (group.option("momentum") != 0.0) return {"momentum_buffer"};
  return {};
}

void SGD::update(const ParamGroup& group, const Tensor& param, const Tensor& grad,
                 double grad_scale, ParamState& state) {
  if (param.dtype() == DType::f64) {
    sgd_update<double>(param, grad, grad_scale, state, group);
  } else {
    sgd_update<float>(param, grad, grad_scale, state, group);
  }
}

}  // namespace heed::optim
