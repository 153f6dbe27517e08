#include "nn/dropout.h"

#include "autograd/ops.h"

namespace heed::nn {

Dropout::Dropout(double probability, std::shared_ptr<Generator> gen)
    : p(probability), generator(std::move(gen)) {
  HEED_CHECK(p >= 0.0 && p < 1.0, "Dropout: probability must be in [0, 1), got {}", p);
  HEED_CHECK(generator != nullptr, "Dropout: needs a generator");
}

Tensor Dropout::forward(const Tensor& x) const {
  return dropout(x, p, is_training(), *generator);
}

}  // namespace heed::nn
