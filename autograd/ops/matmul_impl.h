#pragma once
#include "autograd/tensor.h"

namespace heed {
class PackedOperands;
}

namespace heed {

// out = a . b (+ bias) into a preallocated `out` (any strides with a unit-stride last dim: a
// product may write into a view), choosing the kernel by dtype and the matmul precision:
// f64 -> reference loops; f32 -> oneDNN f32; bf16 -> oneDNN bf16.
// No autograd: the building block of matmul and linear. `pack_b` and `reuse` as for
// onednn_matmul_packed.
void matmul_into(const Tensor& a, const Tensor& b, const Tensor& bias, const Tensor& out,
                 bool pack_b = false, PackedOperands* reuse = nullptr);

// `t` rounded to bf16 in the same memory order (a transposed view stays a transposed view of
// a dense copy; a parameter reads its storage's cached copy): what a bf16 product reads. Ops
// that feed one tensor to several products round it once with this and pass the copy.
Tensor to_bf16_keep_layout(const Tensor& t);

// The same, kept with t's storage until t is next written (like a parameter's copy), when t is
// the whole of its storage: every product that reads t rounds it once (a layer's query, key
// and value projections read one input; a decoder's cross-attention reads the encoder's
// output in every layer).
Tensor shared_bf16_copy(const Tensor& t);

}  // namespace heed
