#pragma once
// Helpers for gradient checks of modules: their parameters become gradcheck inputs, at a
// scale where every path matters (the 0.02 init nearly zeroes attention and the FFN).
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/random.h"
#include "nn/module.h"

namespace heed::testing {

inline std::vector<Tensor> with_parameters(std::vector<Tensor> inputs, const nn::Module& m) {
  for (const Tensor& p : m.parameters()) inputs.push_back(p);
  return inputs;
}

inline void spread_parameters(nn::Module& m, uint64_t seed, double std = 0.4) {
  Generator g(seed);
  NoGradGuard no_grad;
  for (Tensor p : m.parameters()) p.copy_(randn(p.shape(), g, DType::f64, 0.0, std));
}

}  // namespace heed::testing
