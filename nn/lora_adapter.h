#pragma once
// LoRA's low-rank update of one Linear (Hu et al. 2021, as PEFT writes it, REFERENCE.md 15):
// delta(x) = (B (A dropout(x))) * lora_alpha / r, with A [r, in] and B [out, r] in nn.Linear's
// layout whatever the layout of the weight it adapts (PEFT's fan_in_fan_out only transposes the
// merge). B starts at zero, so training starts at the base model.
#include <memory>

#include "autograd/generator.h"
#include "nn/module.h"

namespace heed::nn {

struct LoraOptions {
  int64_t r = 8;
  double alpha = 8;    // lora_alpha
  double dropout = 0;  // lora_dropout, on the adapter's input only
};

class LoraAdapter : public Module {
 public:
  // A ~ Kaiming-uniform with a = sqrt(5) (nn.Linear's own initialisation: U(±1/sqrt(in))),
  // B = 0. Dropout draws from `dropout_generator`, the model's, so that its state is the run's.
  LoraAdapter(int64_t in_features, int64_t out_features, const LoraOptions& options,
              Generator& init, DType dtype, std::shared_ptr<Generator> dropout_generator);
  // The update to add to the adapted Linear's output for input x [..., in].
  Tensor delta(const Tensor& x, bool training) const;
  // scaling * B A as [out, in] (no gradient): what merging adds to an [out, in] weight.
  Tensor merged_delta() const;

  LoraOptions options;
  double scaling;  // lora_alpha / r
  Tensor lora_A, lora_B;
  std::shared_ptr<Generator> dropout_generator;
};

}  // namespace heed::nn
