#pragma once
#include "autograd/generator.h"
#include "autograd/ops.h"
#include "nn/lora_adapter.h"
#include "nn/module.h"

namespace heed::nn {

// y = x . W^T + b with W as [out, in] (nn.Linear), or y = x . W + b with W as [in, out]
// (GPT-2's Conv1D), so that checkpoints keep their native layout. Initialised as Hugging
// Face initialises Transformers: W ~ N(0, init_std), b = 0. With a LoRA adapter (nn/lora.h
// attaches one) the output adds the adapter's low-rank update.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, Generator& init, bool bias = true,
         double init_std = 0.02, DType dtype = DType::f32,
         WeightLayout layout = WeightLayout::out_in);
  Tensor forward(const Tensor& x) const;

  int64_t in_features, out_features;
  WeightLayout layout;
  Tensor weight;
  Tensor bias;  // undefined without bias
  // Not a registered child: the model's own parameters stay Hugging Face's, and the adapter's
  // are PEFT's file (nn/lora_files.h).
  std::shared_ptr<LoraAdapter> lora;
};

}  // namespace heed::nn
