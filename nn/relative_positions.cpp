#include "nn/relative_positions.h"

#include "autograd/ops.h"
#include "autograd/random.h"

namespace heed::nn {

RelativePositions relative_positions_of(std::string_view position_embedding_type) {
  if (position_embedding_type == "relative_key") return RelativePositions::kKey;
  if (position_embedding_type == "relative_key_query") return RelativePositions::kKeyQuery;
  return RelativePositions::kNone;
}

RelativePositionScores::RelativePositionScores(RelativePositions k, int64_t positions,
                                               int64_t head_dim, Generator& init, double init_std,
                                               DType dtype)
    : kind(k), max_positions(positions) {
  HEED_CHECK(kind != RelativePositions::kNone && positions > 0 && head_dim > 0,
             "RelativePositionScores: needs a relative kind and positive sizes, got {} positions "
             "of {}",
             positions, head_dim);
  weight = register_parameter("weight",
                              randn({2 * positions - 1, head_dim}, init, dtype, 0.0, init_std));
}

Tensor RelativePositionScores::scores(const Tensor& q, const Tensor& k) const {
  HEED_CHECK(q.dim() == 4 && k.dim() == 4 && q.size(2) == k.size(2) && q.size(-1) == weight.size(1),
             "relative positions: q {} and k {} must be [B, h, T, {}] over the same positions",
             q.shape_str(), k.shape_str(), weight.size(1));
  const int64_t t = q.size(2);
  HEED_CHECK(t <= max_positions,
             "relative positions: a sequence of {} tokens is longer than max_position_embeddings "
             "{}",
             t, max_positions);
  // Rows P - T .. P + T - 2 of W: the distances -(T - 1) .. T - 1, row j = distance j - (T - 1).
  const Tensor distances =
      weight.slice(0, max_positions - t, max_positions + t - 1).transpose(0, 1);  // [d, 2T - 1]
  Tensor term = relative_position_gather(matmul(q, distances), /*by_key=*/false);
  if (kind == RelativePositions::kKeyQuery) {
    term = add(term, relative_position_gather(matmul(k, distances), /*by_key=*/true));
  }
  return term;
}

}  // namespace heed::nn
