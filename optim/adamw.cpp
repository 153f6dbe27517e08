#include "optim/adamw.h"

#include <cmath>

#include "autograd/kernels/parallel.h"
#include "base/error.h"

namespace heed::optim {

namespace {

ParamGroup adamw_defaults(const AdamWOptions& o) {
  ParamGroup d;
  d.lr = o.lr;
  d.weight_decay = o.weight_decay;
  d.options = {
      {"beta1", o.beta1}, {"beta2", o.beta2}, {"eps", o.eps}, {"amsgrad", o.amsgrad ? 1.0 : 0.0}};
  return d;
}

// The per-update scalars, in the parameter's precision: PyTorch computes them in double
// and its kernels convert them to the tensor's type, which is what the casts below do.
template <typename T>
struct AdamWScalars {
  T grad_scale;  // the clipping coefficient, or 1
  T decay;       // 1 - lr * weight_decay
  T beta1, one_minus_beta1;
  T beta2, one_minus_beta2;
  T bias_correction2_sqrt;
  T eps;
  T neg_step_size;  // -lr / (1 - beta1^t)
};

// One fused pass over [begin, end) of p, g, m, v (and vmax with amsgrad). The operations
// and their order are PyTorch's: the gradient as clip_grad_norm_'s mul_ leaves it, then mul_,
// mul_().add_(), mul_().addcmul_(), sqrt / bc2 + eps, addcdiv_. The loop has no branches or calls,
// so it vectorizes (optim/CMakeLists.txt builds this file with -fno-math-errno so that sqrt becomes
// the vector instruction).
template <typename T, bool kAmsgrad>
void adamw_block(T* __restrict p, const T* __restrict g, T* __restrict m, T* __restrict v,
                 T* __restrict vmax, int64_t begin, int64_t end, const AdamWScalars<T> s) {
  for (int64_t i = begin; i < end; ++i) {
    const T gi = g[i] * s.grad_scale;
    const T pi = p[i] * s.decay;
    const T mi = m[i] * s.beta1 + gi * s.one_minus_beta1;
    const T vi = v[i] * s.beta2 + s.one_minus_beta2 * (gi * gi);
    m[i] = mi;
    v[i] = vi;
    T vd = vi;
    if constexpr (kAmsgrad) {
      vd = vmax[i] > vi ? vmax[i] : vi;
      vmax[i] = vd;
    }
    const T denom = std::sqrt(vd) / s.bias_correction2_sqrt + s.eps;
    p[i] = pi + s.neg_step_size * (mi / denom);
  }
}

template <typename T>
void adamw_update(const Tensor& param, const Tensor& grad, double grad_scale, ParamState& state,
                  const ParamGroup& group) {
  const double lr = *group.lr, wd = *group.weight_decay;
  const double beta1 = group.option("beta1"), beta2 = group.option("beta2");
  const bool amsgrad = group.option("amsgrad") != 0.0;
  const double t = static_cast<double>(state.step);

  auto slot = [&](const char* name) -> Tensor& {
    Tensor& s = state.tensors[name];
    if (!s.defined()) s = zeros_like(param);
    return s;
  };
  T* p = param.data<T>();
  const T* g = grad.data<T>();
  T* m = slot("exp_avg").template data<T>();
  T* v = slot("exp_avg_sq").template data<T>();
  T* vmax = amsgrad ? slot("max_exp_avg_sq").template data<T>() : nullptr;

  AdamWScalars<T> s;
  s.grad_scale = static_cast<T>(grad_scale);
  s.decay = static_cast<T>(1.0 - lr * wd);
  s.beta1 = static_cast<T>(beta1);
  s.one_minus_beta1 = static_cast<T>(1.0 - beta1);
  s.beta2 = static_cast<T>(beta2);
  s.one_minus_beta2 = static_cast<T>(1.0 - beta2);
  s.bias_correction2_sqrt = static_cast<T>(std::sqrt(1.0 - std::pow(beta2, t)));
  s.eps = static_cast<T>(group.option("eps"));
  s.neg_step_size = static_cast<T>(-lr / (1.0 - std::pow(beta1, t)));

  // Blocks of a few thousand elements: long enough to vectorize well, many enough that two
  // threads share a large matrix evenly.
  constexpr int64_t kBlock = 4096;
  const int64_t n = param.numel();
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  parallel_for(blocks, kBlock * 4, [&](int64_t b) {
    const int64_t begin = b * kBlock, end = std::min(n, begin + kBlock);
    if (amsgrad) {
      adamw_block<T, true>(p, g, m, v, vmax, begin, end, s);
    } else {
      adamw_block<T, false>(p, g, m, v, vmax, begin, end, s);
    }
  });
}

}  // namespace

AdamW::AdamW(std::vector<ParamGroup> groups, const AdamWOptions& defaults)
    : Optimizer(std::move(groups), adamw_defaults(defaults)) {
  check_all_groups();
}

AdamW::AdamW(NamedTensors params, const AdamWOptions& defaults)
    : AdamW(std::vector<ParamGroup>{ParamGroup{std::move(params), {}, {}, {}}}, defaults) {}

void AdamW::check_hyper_parameters(const ParamGroup& group, const std::string& where) const {
  const double beta1 = group.option("beta1"), beta2 = group.option("beta2");
  const double amsgrad = group.option("amsgrad");
  HEED_CHECK(*group.lr >= 0.0, "AdamW {}: lr must be >= 0, got {}", where, *group.lr);
  HEED_CHECK(*group.weight_decay >= 0.0, "AdamW {}: weight_decay must be >= 0, got {}", where,
             *group.weight_decay);
  HEED_CHECK(beta1 >= 0.0 && beta1 < 1.0, "AdamW {}: beta1 must be in [0, 1), got {}", where,
             beta1);
  HEED_CHECK(beta2 >= 0.0 && beta2 < 1.0, "AdamW {}: beta2 must be in [0, 1), got {}", where,
             beta2);
  HEED_CHECK(group.option("eps") >= 0.0, "AdamW {}: eps must be >= 0, got {}", where,
             group.option("eps"));
  HEED_CHECK(amsgrad == 0.0 || amsgrad == 1.0, "AdamW {}: amsgrad must be 0 or 1, got {}", where,
             amsgrad);
}

std::vector<std::string> AdamW::state_names(const ParamGroup& group,
                                            const Tensor& /*param*/) const {
  if (group.option("amsgrad") != 0.0) return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  return {"exp_avg", "exp_avg_sq"};
}

void AdamW::update(const ParamGroup& group, const Tensor& param, const Tensor& grad,
                   double grad_scale, ParamState& state) {
  if (param.dtype() == DType::f64) {
    adamw_update<double>(param, grad, grad_scale, state, group);
  } else {
    adamw_update<float>(param, grad, grad_scale, state, group);
  }
}

}  // namespace heed::optim
