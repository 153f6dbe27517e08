#include "autograd/gradcheck.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"

namespace heed {

GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                          const std::vector<Tensor>& inputs, GradcheckOptions options) {
  for (const Tensor& t : inputs) {
    HEED_CHECK(!t.requires_grad() || (t.dtype() == DType::f64 && t.is_contiguous() && t.is_leaf()),
               "gradcheck: inputs that require grad must be contiguous f64 leaves, got {} {}",
               t.dtype(), t.shape_str());
  }
  Tensor out = f(inputs);
  HEED_CHECK(out.dtype() == DType::f64, "gradcheck: the function must return f64, got {}",
             out.dtype());
  HEED_CHECK(out.requires_grad(), "gradcheck: the output does not depend on any input");
  const int64_t m = out.numel();

  // analytic[i][k * m + j] = d out_j / d input_i[k], one backward per output element.
  std::vector<std::vector<double>> analytic(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].requires_grad()) analytic[i].assign(inputs[i].numel() * m, 0.0);
  }
  for (int64_t j = 0; j < m; ++j) {
    for (const Tensor& t : inputs) const_cast<Tensor&>(t).zero_grad();
    Tensor seed = zeros(out.shape(), DType::f64);
    seed.data<double>()[j] = 1.0;
    out.backward(seed, /*retain_graph=*/true);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].requires_grad()) continue;
      Tensor g = inputs[i].grad();
      if (!g.defined()) continue;  // no path: the gradient is zero
      std::vector<double> gv = g.to_vector<double>();
      for (int64_t k = 0; k < inputs[i].numel(); ++k) analytic[i][k * m + j] = gv[k];
    }
  }
  for (const Tensor& t : inputs) const_cast<Tensor&>(t).zero_grad();

  GradcheckResult result;
  int reported = 0;
  NoGradGuard no_grad;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].requires_grad()) continue;
    double* x = inputs[i].data<double>();
    for (int64_t k = 0; k < inputs[i].numel(); ++k) {
      const double original = x[k];
      x[k] = original + options.eps;
      std::vector<double> plus = f(inputs).to_vector<double>();
      x[k] = original - options.eps;
      std::vector<double> minus = f(inputs).to_vector<double>();
      x[k] = original;
      for (int64_t j = 0; j < m; ++j) {
        const double numeric = (plus[j] - minus[j]) / (2 * options.eps);
        const double a = analytic[i][k * m + j];
        ++result.checked;
        if (!(std::abs(a - numeric) <= options.atol + options.rtol * std::abs(numeric))) {
          result.ok = false;
          if (reported++ < 8) {
            result.message += fmt::format(
                "input {} {} element {} -> output element {}: backward {:.8g}, numeric {:.8g}\n", i,
                inputs[i].shape_str(), k, j, a, numeric);
          }
        }
      }
    }
  }
  return result;
}

}  // namespace heed
