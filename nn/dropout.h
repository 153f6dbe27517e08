#pragma once
#include <memory>

#include "autograd/generator.h"
#include "nn/module.h"

namespace heed::nn {

// Inverted dropout in training, identity in eval. Draws from a generator that a model
// shares among all its dropouts, so that one (seed, offset) pair is its whole random state.
class Dropout : public Module {
 public:
  Dropout(double p, std::shared_ptr<Generator> generator);
  Tensor forward(const Tensor& x) const;

  double p;
  std::shared_ptr<Generator> generator;
};

}  // namespace heed::nn
