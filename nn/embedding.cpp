#include "nn/embedding.h"

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "autograd/random.h"

namespace heed::nn {

Embedding::Embedding(int64_t num_embeddings, int64_t dim, Generator& init, int64_t padding,
                     double init_std, DType dtype)
    : padding_idx(padding) {
  HEED_CHECK(num_embeddings > 0 && dim > 0, "Embedding: sizes must be positive, got {} x {}",
             num_embeddings, dim);
  HEED_CHECK(padding < num_embeddings, "Embedding: padding_idx {} outside a table of {} rows",
             padding, num_embeddings);
  Tensor table = randn({num_embeddings, dim}, init, dtype, 0.0, init_std);
  if (padding >= 0) table.select(0, padding).zero_();
  weight = register_parameter("weight", table);
}

Tensor Embedding::forward(const Tensor& ids) const {
  return embedding(weight, ids, padding_idx);
}

}  // namespace heed::nn
