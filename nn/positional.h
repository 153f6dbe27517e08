#pragma once
#include "autograd/tensor.h"

namespace heed::nn {

// The fixed sinusoidal position table of "Attention Is All You Need": row p holds
// sin(p / 10000^(2i/C)) in column 2i and the matching cos in column 2i+1.
Tensor sinusoidal_positions(int64_t positions, int64_t dim, DType dtype = DType::f32);

}  // namespace heed::nn
