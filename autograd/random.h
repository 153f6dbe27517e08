#pragma once
// Random tensors from an explicit Generator: the same seed gives the same values on every
// machine and thread count, since each element is a function of (seed, counter).
#include "autograd/generator.h"
#include "autograd/tensor.h"

namespace heed {

Tensor randn(const Shape& shape, Generator& generator, DType dtype = DType::f32, double mean = 0.0,
             double std = 1.0);
Tensor uniform(const Shape& shape, Generator& generator, double low = 0.0, double high = 1.0,
               DType dtype = DType::f32);

// In-place initialisers for parameters (no graph is recorded).
void normal_(Tensor& t, Generator& generator, double mean, double std);
void uniform_(Tensor& t, Generator& generator, double low, double high);

}  // namespace heed
