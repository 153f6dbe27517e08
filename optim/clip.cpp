#include "optim/clip.h"

#include <algorithm>
#include <cmath>

#include "autograd/kernels/parallel.h"
#include "base/error.h"

namespace heed::optim {

namespace {

constexpr int64_t kBlock = 4096;

template <typename T>
double sum_of_squares(const T* g, int64_t n) {
  // One partial sum per fixed block, added in block order: the same bits on any number of
  // threads, which a resumed run needs to match an uninterrupted one.
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> partial(static_cast<size_t>(blocks));
  parallel_for(blocks, kBlock * 2, [&](int64_t b) {
    const int64_t begin = b * kBlock, end = std::min(n, begin + kBlock);
    // Eight independent running sums: a fixed order the compiler can put in vector lanes
    // (a single running sum cannot be vectorized without reassociating it).
    constexpr int kLanes = 8;
    double lanes[kLanes] = {};
    int64_t i = begin;
    for (; i + kLanes <= end; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) lanes[j] += static_cast<double>(g[i + j]) * g[i + j];
    }
    double s = 0.0;
    for (; i < end; ++i) s += static_cast<double>(g[i]) * g[i];
    for (double lane : lanes) s += lane;
    partial[b] = s;
  });
  double total = 0.0;
  for (double s : partial) total += s;
  return total;
}

template <typename T>
void scale(T* g, int64_t n, T coef) {
  parallel_for((n + kBlock - 1) / kBlock, kBlock, [&](int64_t b) {
    const int64_t begin = b * kBlock, end = std::min(n, begin + kBlock);
    for (int64_t i = begin; i < end; ++i) g[i] *= coef;
  });
}

std::vector<Tensor> contiguous_grads(const std::vector<Tensor>& params) {
  std::vector<Tensor> grads;
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    HEED_CHECK(g.dtype() == DType::f32 || g.dtype() == DType::f64,
               "clip_grad_norm_: a gradient of shape {} is {}; only f32 and f64 are supported",
               g.shape_str(), g.dtype());
    if (!g.is_contiguous()) {
      // Clipping must write into the gradient itself, so make it a contiguous one first.
      g = g.contiguous();
      Tensor(p).set_grad(g);
    }
    grads.push_back(g);
  }
  return grads;
}

// Every parameter of every group of `optimizer`.
std::vector<Tensor> parameters_of(const Optimizer& optimizer) {
  std::vector<Tensor> params;
  for (const ParamGroup& group : optimizer.param_groups()) {
    for (const auto& [name, p] : group.params) params.push_back(p);
  }
  return params;
}

}  // namespace

double grad_norm(const std::vector<Tensor>& params) {
  double total = 0.0;
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (!g.is_contiguous()) g = g.contiguous();
    if (g.dtype() == DType::f64) {
      total += sum_of_squares(g.data<double>(), g.numel());
    } else {
      HEED_CHECK(g.dtype() == DType::f32, "grad_norm: a gradient of shape {} is {}", g.shape_str(),
                 g.dtype());
      total += sum_of_squares(g.data<float>(), g.numel());
    }
  }
  return std::sqrt(total);
}

double grad_norm(const Optimizer& optimizer) {
  return grad_norm(parameters_of(optimizer));
}

double clip_coefficient(double total, double max_norm) {
  HEED_CHECK(max_norm >= 0.0, "clip_coefficient: max_norm must be >= 0, got {}", max_norm);
  if (!std::isfinite(total)) return 1.0;
  return std::min(1.0, max_norm / (total + 1e-6));
}

double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm,
                       bool error_if_nonfinite) {
  HEED_CHECK(max_norm >= 0.0, "clip_grad_norm_: max_norm must be >= 0, got {}", max_norm);
  const std::vector<Tensor> grads = contiguous_grads(params);
  const double total = grad_norm(params);
  if (!std::isfinite(total)) {
    HEED_CHECK(!error_if_nonfinite,
               "clip_grad_norm_: the total norm of the gradients is {}: some gradient holds "
               "NaN or Inf",
               total);
    return total;
  }
  const double coef = clip_coefficient(total, max_norm);
  if (coef < 1.0) {
    for (const Tensor& g : grads) {
      if (g.dtype() == DType::f64) {
        scale(g.data<double>(), g.numel(), coef);
      } else {
        // PyTorch multiplies an f32 gradient by the coefficient rounded to f32.
        scale(g.data<float>(), g.numel(), static_cast<float>(coef));
      }
      g.storage()->bump_version();
    }
  }
  return total;
}

double clip_grad_norm_(const Optimizer& optimizer, double max_norm, bool error_if_nonfinite) {
  return clip_grad_norm_(parameters_of(optimizer), max_norm, error_if_nonfinite);
}

}  // namespace heed::optim
