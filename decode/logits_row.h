#pragma once
// Shared by the decoders of this folder.
#include <cstdint>
#include <vector>

#include "autograd/tensor.h"

namespace heed::decode {

// One row of a [N, V] f32 tensor, as a vector the logits processors work on.
inline std::vector<float> logits_row(const Tensor& logits, int64_t i) {
  const int64_t V = logits.size(1);
  const float* p = logits.data<float>() + i * V;
  return std::vector<float>(p, p + V);
}

}  // namespace heed::decode
