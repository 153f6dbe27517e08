#pragma once
#include <array>
#include <string>
#include <string_view>

#include "autograd/ops.h"
#include "nn/module.h"

namespace heed::nn {

// GELU, exact (`gelu`) or with GPT-2's tanh approximation (`gelu_new`).
class GELU : public Module {
 public:
  explicit GELU(GeluApproximation approximation = GeluApproximation::none)
      : approximation(approximation) {}
  Tensor forward(const Tensor& x) const { return gelu(x, approximation); }
  GeluApproximation approximation;
};

// Hugging Face's activation names: gelu, gelu_new / gelu_pytorch_tanh, relu.
enum class Activation { gelu, gelu_tanh, relu };
inline constexpr std::array<std::string_view, 4> kActivationNames{"gelu", "gelu_new",
                                                                  "gelu_pytorch_tanh", "relu"};
Activation parse_activation(const std::string& name);
const char* activation_name(Activation a);
Tensor activate(const Tensor& x, Activation a);

}  // namespace heed::nn
