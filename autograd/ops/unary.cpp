// Pointwise functions of one tensor: neg, exp, log, sqrt, pow, tanh, sigmoid, relu, GELU.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "autograd/kernels/gelu.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/wide_loops.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/elementwise.h"
#include "base/profile.h"

namespace heed {
namespace {

// A node whose backward is g * f'(saved), with f' given as a function of one saved tensor
// (the input or the output, whichever is cheaper; the input may be saved as its bf16
// rounding, see pointwise_keeping_bf16_input).
template <typename Derivative>
struct PointwiseBackward : Node {
  const char* op_name;
  Derivative derivative;
  SavedTensor operand{this};  // f's input or output, as f' takes it
  PointwiseBackward(const char* n, Derivative d) : op_name(n), derivative(d) {}
  const char* name() const override { return op_name; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

// f over a contiguous f32 input whose backward needs the input (GELU's does), when the
// matrix products run in bf16: the backward keeps the input rounded to bf16, written in the
// forward's pass, instead of the f32 input (half the memory; GELU's input is the largest
// activation of a Transformer layer). The products already see bf16 operands, and mixed
// precision elsewhere (PyTorch's autocast) keeps this input in bf16 as well.
template <typename Forward, typename Derivative>
Tensor pointwise_keeping_bf16_input(const Tensor& a, const char* backward_name, Forward f,
                                    Derivative d) {
  Tensor out = Tensor::empty(a.shape(), DType::f32);
  Tensor rounded = Tensor::empty(a.shape(), DType::bf16);
  const float* x = a.data<float>();
  float* o = out.data<float>();
  bf16* r = rounded.data<bf16>();
  const int64_t n = a.numel();
  constexpr int64_t kChunk = 16384;
  parallel_for((n + kChunk - 1) / kChunk, kChunk, [&](int64_t c) {
    const int64_t begin = c * kChunk, end = std::min(n, begin + kChunk);
    for (int64_t i = begin; i < end; ++i) o[i] = f(x[i]);
    wide::round_to_bf16(x + begin, end - begin, r + begin);
  });
  auto node = std::make_shared<PointwiseBackward<Derivative>>(backward_name, d);
  node->operand.save_copy_of(rounded, a);
  attach_node(out, node, {a});
  return out;
}

template <typename Forward, typename Derivative>
Tensor pointwise(const Tensor& a, const char* op, const char* backward_name, Forward f,
                 Derivative d, bool derivative_of_output) {
  Tensor out = map1(a, op, f);
  if (needs_grad({&a})) {
    auto node = std::make_shared<PointwiseBackward<Derivative>>(backward_name, d);
    node->operand.save(derivative_of_output ? out : a);
    attach_node(out, node, {a});
  }
  return out;
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
  const bool keep_bf16_input = a.dtype() == DType::f32 && a.is_contiguous() &&
                               matmul_precision() == MatmulPrecision::bf16 && needs_grad({&a});
  const auto apply = [&](const char* backward_name, auto f, auto d) {
    return keep_bf16_input ? pointwise_keeping_bf16_input(a, backward_name, f, d)
                           : pointwise(a, "gelu", backward_name, f, d, false);
  };
  if (approximation == GeluApproximation::tanh) {
    return apply(
        "GeluTanhBackward", []<typename T>(T x) { return gelu_tanh(x); },
        []<typename T>(T g, T x) __attribute__((always_inline)) { return g * gelu_tanh_grad(x); });
  }
  return apply(
      "GeluBackward", []<typename T>(T x) { return gelu_erf(x); },
      []<typename T>(T g, T x) __attribute__((always_inline)) { return g * gelu_erf_grad(x); });
}

namespace {

// g * f'(x) for an f32 gradient and x saved as its bf16 rounding (contiguous), computed in
// f32, into `out`.
template <typename Derivative>
void derivative_times_gradient_from_bf16(const Tensor& g_in, const Tensor& x, Derivative d,
                                         Tensor& out) {
  Tensor g = g_in.contiguous();
  const float* gp = g.data<float>();
  const bf16* xp = x.data<bf16>();
  float* o = out.data<float>();
  const int64_t n = x.numel();
  constexpr int64_t kChunk = 16384;
  parallel_for((n + kChunk - 1) / kChunk, kChunk, [&](int64_t c) {
    const int64_t end = std::min(n, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < end; ++i) o[i] = d(gp[i], static_cast<float>(xp[i]));
  });
}

}  // namespace

template <typename Derivative>
std::vector<Tensor> PointwiseBackward<Derivative>::backward(const Tensor& g) {
  const Tensor x = operand.get();
  Tensor into = reusable_gradient(g, x.shape());
  if (x.dtype() != DType::bf16) return {map2(g, x, op_name, derivative, into)};
  derivative_times_gradient_from_bf16(g, x, derivative, into);
  return {into};
}

}  // namespace heed
