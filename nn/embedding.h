#pragma once
#include "autograd/generator.h"
#include "nn/module.h"

namespace heed::nn {

// A [num_embeddings, dim] table looked up by integer ids. The padding row (if any) is
// initialised to zero and gets no gradient, as in PyTorch and Hugging Face.
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t dim, Generator& init, int64_t padding_idx = -1,
            double init_std = 0.02, DType dtype = DType::f32);
  Tensor forward(const Tensor& ids) const;

  Tensor weight;
  int64_t padding_idx;
};

}  // namespace heed::nn
