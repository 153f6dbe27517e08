#pragma once
// Row counts rounded for oneDNN's sake: a product is built (and kept) for each row count it
// sees, so operands whose row count changes from batch to batch (a masked-LM head's labelled
// rows, the last layer's picked queries) go at a few counts instead of hundreds
// (docs/performance_history.md has the numbers).
#include <bit>
#include <cstdint>

namespace heed::nn {

// `rows` rounded up to one of eight sizes per power of two (at most 12.5% more); under 16,
// as it is.
inline int64_t padded_row_count(int64_t rows) {
  if (rows < 16) return rows;
  const auto step = static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(rows)) / 8);
  return (rows + step - 1) / step * step;
}

// The block of queries per sequence that attention from picked rows runs at, when the most
// rows any of the sequences of `length` positions has picked is `most`: padded as above, or
// `length` (attend from every position) where that is no more work.
inline int64_t picked_query_block(int64_t most, int64_t length) {
  const int64_t padded = padded_row_count(most);
  return padded > 0 && padded < length ? padded : length;
}

}  // namespace heed::nn
