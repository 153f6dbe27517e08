#include "nn/relative_attention_bias.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/ops.h"
#include "autograd/random.h"

namespace heed::nn {

int64_t relative_position_bucket(int64_t relative_position, bool bidirectional, int64_t num_buckets,
                                 int64_t max_distance) {
  int64_t bucket = 0, n = 0;
  if (bidirectional) {
    num_buckets /= 2;
    if (relative_position > 0) bucket = num_buckets;
    n = relative_position < 0 ? -relative_position : relative_position;
  } else {
    n = std::max<int64_t>(-relative_position, 0);
  }
  const int64_t exact = num_buckets / 2;
  if (n < exact) return bucket + n;
  // float32 throughout, as torch.log(rp.float() / max_exact) / math.log(...) * (...) runs: a
  // distance on a bucket's edge then lands where Hugging Face's does.
  const float log_ratio = std::log(static_cast<float>(n) / static_cast<float>(exact));
  const float log_range =
      static_cast<float>(std::log(static_cast<double>(max_distance) / static_cast<double>(exact)));
  const float scaled = log_ratio / log_range * static_cast<float>(num_buckets - exact);
  return bucket + std::min(exact + static_cast<int64_t>(scaled), num_buckets - 1);
}

RelativeAttentionBias::RelativeAttentionBias(int64_t buckets, int64_t distance, int64_t heads,
                                             bool both_directions, Generator& init, double init_std,
                                             DType dtype)
    : num_buckets(buckets), max_distance(distance), bidirectional(both_directions) {
  HEED_CHECK(buckets >= (both_directions ? 4 : 2) && distance > buckets / (both_directions ? 4 : 2),
             "relative attention bias: {} buckets and max distance {} leave no logarithmic range",
             buckets, distance);
  weight = register_parameter("weight", randn({buckets, heads}, init, dtype, 0.0, init_std));
}

Tensor RelativeAttentionBias::distance_bias(int64_t query_length, int64_t key_length) const {
  HEED_CHECK(query_length > 0 && key_length >= query_length,
             "relative attention bias: {} queries must be the last of {} positions", query_length,
             key_length);
  const int64_t width = query_length + key_length - 1;
  std::vector<int64_t> buckets(static_cast<size_t>(width));
  for (int64_t d = 0; d < width; ++d) {
    buckets[d] =
        relative_position_bucket(d - (key_length - 1), bidirectional, num_buckets, max_distance);
  }
  // [width, heads] rows of the table -> [heads, width].
  return transpose(embedding(weight, from_vector<int64_t>(buckets, {width})), 0, 1);
}

}  // namespace heed::nn
