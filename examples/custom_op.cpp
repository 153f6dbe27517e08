// custom_op: a new differentiable op written outside heed, softplus(x) = log(1 + e^x), with its
// forward and its backward side by side as heed's own ops are (autograd/ops/*.cpp), then
// checked: its gradient against central differences in float64 (heed::gradcheck), and its
// values and gradients against the same function composed of heed's ops.
#include <heed/heed.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace heed;

// The backward of softplus: what it keeps from the forward (the input), and its rule,
// d/dx log(1 + e^x) = sigmoid(x), itself written with heed's ops.
struct SoftplusBackward : Node {
  SavedTensor input{this};
  const char* name() const override { return "SoftplusBackward"; }
  std::vector<Tensor> backward(const Tensor& grad_output) override {
    return {mul(grad_output, sigmoid(input.get()))};
  }
};

template <typename T>
void softplus_loop(const T* x, T* y, int64_t n) {
  // log1p(e^x) overflows for large x, where softplus(x) is x to the last bit.
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > T(30) ? x[i] : std::log1p(std::exp(x[i]));
}

Tensor softplus(const Tensor& a) {
  HEED_CHECK(a.dtype() == DType::f32 || a.dtype() == DType::f64,
             "softplus: takes f32 or f64, not {}", a.dtype());
  const Tensor x = a.contiguous();
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  if (x.dtype() == DType::f64) {
    softplus_loop(x.data<double>(), out.data<double>(), x.numel());
  } else {
    softplus_loop(x.data<float>(), out.data<float>(), x.numel());
  }
  // Record the op in the graph only when a gradient will flow through it.
  if (needs_grad({&a})) {
    auto node = std::make_shared<SoftplusBackward>();
    node->input.save(a);
    attach_node(out, node, {a});
  }
  return out;
}

int main() {
  Generator gen(0);
  // Gradient check: backward's Jacobian against central differences, in float64.
  Tensor x = randn({4, 5}, gen, DType::f64, 0.0, 3.0);
  x.set_requires_grad(true);
  const GradcheckResult check =
      gradcheck([](const std::vector<Tensor>& in) { return softplus(in[0]); }, {x});
  std::printf("gradcheck: %s (%lld Jacobian entries)%s%s\n", check.ok ? "passed" : "FAILED",
              static_cast<long long>(check.checked), check.ok ? "" : ": ", check.message.c_str());

  // The same function from heed's ops: the values and the gradients agree.
  Tensor y = randn({64}, gen, DType::f32, 0.0, 4.0);
  y.set_requires_grad(true);
  sum(softplus(y)).backward();
  const std::vector<float> grad_op = y.grad().to_vector<float>();
  const std::vector<float> value_op = softplus(y).to_vector<float>();
  y.zero_grad();
  const Tensor composed = log(add(exp(y), 1.0));
  sum(composed).backward();
  const std::vector<float> grad_composed = y.grad().to_vector<float>();
  const std::vector<float> value_composed = composed.to_vector<float>();
  double worst = 0.0;
  for (size_t i = 0; i < grad_op.size(); ++i) {
    worst = std::max({worst, std::abs(double(grad_op[i]) - grad_composed[i]),
                      std::abs(double(value_op[i]) - value_composed[i])});
  }
  const bool agree = worst < 1e-5;
  std::printf("against log(exp(x) + 1): largest difference %.2e (%s)\n", worst,
              agree ? "agree" : "DIFFER");
  return check.ok && agree ? 0 : 1;
}
