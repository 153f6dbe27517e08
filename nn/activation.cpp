#include "nn/activation.h"

#include <fmt/ranges.h>

namespace heed::nn {

Activation parse_activation(const std::string& name) {
  if (name == "gelu") return Activation::gelu;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::gelu_tanh;
  if (name == "relu") return Activation::relu;
  fail("unknown activation '{}' (expected one of {})", name, fmt::join(kActivationNames, ", "));
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::gelu:
      return "gelu";
    case Activation::gelu_tanh:
      return "gelu_new";
    case Activation::relu:
      return "relu";
  }
  return "?";
}

Tensor activate(const Tensor& x, Activation a) {
  switch (a) {
    case Activation::gelu:
      return gelu(x, GeluApproximation::none);
    case Activation::gelu_tanh:
      return gelu(x, GeluApproximation::tanh);
    case Activation::relu:
      return relu(x);
  }
  return x;
}

}  // namespace heed::nn
