#pragma once
// BERT's relative position embeddings (Hugging Face transformers 4.x, position_embedding_type
// relative_key / relative_key_query; Shaw et al. 2018, Huang et al. 2020): each attention layer
// learns a table W [2P - 1, d] of distances, P = max_position_embeddings, shared by the heads;
// query l and key r are E[l, r] = W[l - r + P - 1] apart, and the scores before the 1/sqrt(d)
// scale gain q_l . E[l, r] (relative_key) and also k_r . E[l, r] (relative_key_query).
#include <string_view>

#include "autograd/generator.h"
#include "nn/module.h"

namespace heed::nn {

enum class RelativePositions { kNone, kKey, kKeyQuery };

// "relative_key" -> kKey, "relative_key_query" -> kKeyQuery, anything else -> kNone.
RelativePositions relative_positions_of(std::string_view position_embedding_type);

class RelativePositionScores : public Module {
 public:
  RelativePositionScores(RelativePositions kind, int64_t max_positions, int64_t head_dim,
                         Generator& init, double init_std, DType dtype = DType::f32);

  // The term added to q . k^T before the scale, [B, h, T, T], for q and k [B, h, T, d] of one
  // sequence of T <= max_positions (self-attention: keys and queries at the same positions).
  // Made from q . W^T over the 2T - 1 distances that occur, gathered by l - r
  // (relative_position_gather), never from E [T, T, d].
  Tensor scores(const Tensor& q, const Tensor& k) const;

  RelativePositions kind;
  int64_t max_positions;
  Tensor weight;  // [2P - 1, d]: Hugging Face's distance_embedding.weight
};

}  // namespace heed::nn
