// Pointwise functions of one tensor: neg, exp, log, sqrt, pow, tanh, sigmoid, relu, GELU.
#include <cmath>
#include <type_traits>

#include "autograd/kernels/fast_math.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/elementwise.h"
#include "autograd/profile.h"

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
    Tensor into = reusable_gradient(g, saved(0).shape());
    return {map2(g, saved(0), op_name, derivative, into)};
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

// float takes the vectorisable approximations of fast_math.h, double the libm functions
// (the reference that gradient checks and the fast-path tests compare against). Always
// inlined: an out-of-line call in the map loops would stop them vectorising.
template <typename T>
[[gnu::always_inline]] inline T gelu_erf(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return 0.5f * x * (1.0f + fast::erf(x * static_cast<float>(kInvSqrt2)));
  } else {
    return 0.5 * x * (1 + std::erf(x * kInvSqrt2));
  }
}
template <typename T>
[[gnu::always_inline]] inline T gelu_erf_grad(T x) {
  if constexpr (std::is_same_v<T, float>) {
    float gaussian;  // e^{-x²/2}
    const float erf = fast::erf(x * static_cast<float>(kInvSqrt2), gaussian);
    return 0.5f * (1.0f + erf) + x * static_cast<float>(kInvSqrt2Pi) * gaussian;
  } else {
    const double cdf = 0.5 * (1 + std::erf(x * kInvSqrt2));
    const double pdf = kInvSqrt2Pi * std::exp(-0.5 * x * x);
    return cdf + x * pdf;
  }
}
template <typename T>
[[gnu::always_inline]] inline T gelu_tanh(T x) {
  const T inner = static_cast<T>(kSqrt2OverPi) * (x + static_cast<T>(0.044715) * x * x * x);
  if constexpr (std::is_same_v<T, float>) {
    return 0.5f * x * (1.0f + fast::tanh(inner));
  } else {
    return 0.5 * x * (1 + std::tanh(inner));
  }
}
template <typename T>
[[gnu::always_inline]] inline T gelu_tanh_grad(T x) {
  const T c = static_cast<T>(kSqrt2OverPi);
  const T inner = c * (x + static_cast<T>(0.044715) * x * x * x);
  const T dinner = c * (1 + static_cast<T>(3 * 0.044715) * x * x);
  T t, sech2;  // tanh(inner) and its derivative 1 - tanh²
  if constexpr (std::is_same_v<T, float>) {
    t = fast::tanh(inner, sech2);
  } else {
    t = std::tanh(inner);
    sech2 = 1 - t * t;
  }
  return static_cast<T>(0.5) * (1 + t) + static_cast<T>(0.5) * x * sech2 * dinner;
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
  OpTimer timer("gelu");
  if (approximation == GeluApproximation::tanh) {
    return pointwise(
        a, "gelu", "GeluTanhBackward", []<typename T>(T x) { return gelu_tanh(x); },
        []<typename T>(T g, T x) __attribute__((always_inline)) { return g * gelu_tanh_grad(x); },
        false);
  }
  return pointwise(
      a, "gelu", "GeluBackward", []<typename T>(T x) { return gelu_erf(x); },
      []<typename T>(T g, T x) __attribute__((always_inline)) { return g * gelu_erf_grad(x); },
      false);
}

}  // namespace heed
