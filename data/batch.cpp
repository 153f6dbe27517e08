#include "data/batch.h"

#include <algorithm>

#include "base/error.h"

namespace heed::data {
namespace {

// Rows [begin, end) of a row-major [rows, width] matrix; an empty matrix stays empty.
std::vector<int64_t> rows_of(const std::vector<int64_t>& matrix, int64_t width, int64_t begin,
                             int64_t end) {
  if (matrix.empty()) return {};
  return std::vector<int64_t>(matrix.begin() + begin * width, matrix.begin() + end * width);
}

}  // namespace

Batch batch_rows(const Batch& b, int64_t begin, int64_t end) {
  HEED_CHECK(0 <= begin && begin <= end && end <= b.batch_size,
             "rows [{}, {}) of a batch of {} rows", begin, end, b.batch_size);
  Batch out;
  out.batch_size = end - begin;
  out.seq_len = b.seq_len;
  out.input_ids = rows_of(b.input_ids, b.seq_len, begin, end);
  out.attention_mask = rows_of(b.attention_mask, b.seq_len, begin, end);
  out.token_type_ids = rows_of(b.token_type_ids, b.seq_len, begin, end);
  out.label_len = b.label_len;
  out.labels = rows_of(b.labels, b.label_len, begin, end);
  out.decoder_seq_len = b.decoder_seq_len;
  out.decoder_input_ids = rows_of(b.decoder_input_ids, b.decoder_seq_len, begin, end);
  out.decoder_attention_mask = rows_of(b.decoder_attention_mask, b.decoder_seq_len, begin, end);
  out.num_target_tokens = static_cast<int64_t>(std::count_if(
      out.labels.begin(), out.labels.end(), [](int64_t l) { return l != kIgnoreIndex; }));
  return out;
}

}  // namespace heed::data
