// Pointwise functions of one tensor: neg, exp, log, sqrt, pow, tanh, sigmoid, relu, GELU.
#include <cmath>

#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/elementwise.h"

namespace heed {
namespace {

constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2/pi)
constexpr double kInvSqrt2 = 0.7071067811865476;
constexpr double kInvSqrt2Pi = 0.3989422804014327;  // 1/sqrt(2*pi)

// A node whose backward is g * f'(saved), with f' given as a function of one saved tensor
// (the input or the output, whichever is cheaper).
template <typename Derivative>
struct PointwiseBackward : Node {
  const char* op_name;
  Derivative derivative;
  PointwiseBackward(const char* n, Derivative d) : op_name(n), derivative(d) {}
  const char* name() const override { return op_name; }
  std::vector<Tensor> backward(const Tensor& g) override {
    return {map2(g, saved(0), op_name, derivative)};
  }
};

template <typename Forward, typename Derivative>
Tensor pointwise(const Tensor& a, const char* op, const char* backward_name, Forward f,
                 Derivative d, bool derivative_of_output) {
  Tensor out = map1(a, op, f);
  if (needs_grad({&a})) {
    auto node = std::make_shared<PointwiseBackward<Derivative>>(backward_name, d);
    node->save(derivative_of_output ? out : a);
    attach_node(out, node, {a});
  }
  return out;
}

template <typename T>
T gelu_erf(T x) {
  return static_cast<T>(0.5) * x * (1 + std::erf(x * static_cast<T>(kInvSqrt2)));
}
template <typename T>
T gelu_erf_grad(T x) {
  const T cdf = static_cast<T>(0.5) * (1 + std::erf(x * static_cast<T>(kInvSqrt2)));
  const T pdf = static_cast<T>(kInvSqrt2Pi) * std::exp(static_cast<T>(-0.5) * x * x);
  return cdf + x * pdf;
}
template <typename T>
T gelu_tanh(T x) {
  const T inner = static_cast<T>(kSqrt2OverPi) * (x + static_cast<T>(0.044715) * x * x * x);
  return static_cast<T>(0.5) * x * (1 + std::tanh(inner));
}
template <typename T>
T gelu_tanh_grad(T x) {
  const T c = static_cast<T>(kSqrt2OverPi);
  const T inner = c * (x + static_cast<T>(0.044715) * x * x * x);
  const T t = std::tanh(inner);
  const T dinner = c * (1 + static_cast<T>(3 * 0.044715) * x * x);
  return static_cast<T>(0.5) * (1 + t) + static_cast<T>(0.5) * x * (1 - t * t) * dinner;
}

}  // namespace

Tensor neg(const Tensor& a) {
  return mul(a, -1.0);
}

Tensor exp(const Tensor& a) {
  return pointwise(
      a, "exp", "ExpBackward", []<typename T>(T x) { return std::exp(x); },
      []<typename T>(T g, T y) { return g * y; }, true);
}

Tensor log(const Tensor& a) {
  return pointwise(
      a, "log", "LogBackward", []<typename T>(T x) { return std::log(x); },
      []<typename T>(T g, T x) { return g / x; }, false);
}

Tensor sqrt(const Tensor& a) {
  return pointwise(
      a, "sqrt", "SqrtBackward", []<typename T>(T x) { return std::sqrt(x); },
      []<typename T>(T g, T y) { return g / (2 * y); }, true);
}

Tensor pow(const Tensor& a, double exponent) {
  return pointwise(
      a, "pow", "PowBackward",
      [exponent]<typename T>(T x) { return static_cast<T>(std::pow(x, static_cast<T>(exponent))); },
      [exponent]<typename T>(T g, T x) {
        return g * static_cast<T>(exponent) *
               static_cast<T>(std::pow(x, static_cast<T>(exponent - 1)));
      },
      false);
}

Tensor tanh(const Tensor& a) {
  return pointwise(
      a, "tanh", "TanhBackward", []<typename T>(T x) { return std::tanh(x); },
      []<typename T>(T g, T y) { return g * (1 - y * y); }, true);
}

Tensor sigmoid(const Tensor& a) {
  return pointwise(
      a, "sigmoid", "SigmoidBackward", []<typename T>(T x) { return 1 / (1 + std::exp(-x)); },
      []<typename T>(T g, T y) { return g * y * (1 - y); }, true);
}

Tensor relu(const Tensor& a) {
  return pointwise(
      a, "relu", "ReluBackward", []<typename T>(T x) { return x > 0 ? x : T(0); },
      []<typename T>(T g, T y) { return y > 0 ? g : T(0); }, true);
}

Tensor gelu(const Tensor& a, GeluApproximation approximation) {
  if (approximation == GeluApproximation::tanh) {
    return pointwise(
        a, "gelu", "GeluTanhBackward", []<typename T>(T x) { return gelu_tanh(x); },
        []<typename T>(T g, T x) { return g * gelu_tanh_grad(x); }, false);
  }
  return pointwise(
      a, "gelu", "GeluBackward", []<typename T>(T x) { return gelu_erf(x); },
      []<typename T>(T g, T x) { return g * gelu_erf_grad(x); }, false);
}

}  // namespace heed
