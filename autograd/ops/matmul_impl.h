#pragma once
#include "autograd/tensor.h"

namespace heed {

// out = a . b (+ bias) into a preallocated contiguous `out`, choosing the kernel by dtype and
// the matmul precision: f64 -> reference loops; f32 -> oneDNN f32; bf16 -> oneDNN bf16.
// No autograd: the building block of matmul and linear.
void matmul_into(const Tensor& a, const Tensor& b, const Tensor& bias, const Tensor& out);

}  // namespace heed
