#pragma once
// The queries that attention's output rows read, when a head reads only a few positions (a
// masked-LM head's labelled rows, [CLS]): picked per sequence, so that attention runs on
// them alone as a batch.
#include <cstdint>

#include "autograd/tensor.h"

namespace heed::nn {

// A block of the same count of queries per sequence.
struct PickedQueries {
  int64_t per_sequence = 0;  // Q
  Tensor rows;               // i64 [B * Q], into the flattened [B * Tq] queries
  Tensor positions;          // i64 [B, Q], the same as positions in their sequences
  Tensor outputs;            // i64 [M]: each output row's row of the [B * Q] results
};

// The queries of B sequences of Tq that output_rows (i64 [M], into the flattened [B * Tq]
// queries) read. Q is picked_query_block's (a few block sizes over a run, not one per
// batch); Q = Tq means attention from every query, and nothing else is filled in. A
// sequence with fewer picked queries repeats its first (or position 0): those rows are
// computed and never read.
PickedQueries pick_queries(const Tensor& output_rows, int64_t B, int64_t Tq);

}  // namespace heed::nn
