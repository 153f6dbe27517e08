#pragma once
// Row counts rounded for oneDNN's sake: a product is built (and kept) for each row count it
// sees, so operands whose row count changes from batch to batch (a masked-LM head's labelled
// rows, the last layer's picked queries) go at a few counts instead of hundreds
// (docs/performance.md has the numbers).
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

}  // namespace heed::nn
