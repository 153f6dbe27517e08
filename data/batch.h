#pragma once
// Plain data that the collators produce and the training code turns into tensors. The data
// layer knows nothing of tensors (DESIGN: data -> train -> nn -> autograd).
#include <cstdint>
#include <vector>

namespace heed::data {

// Targets that the loss ignores (PyTorch CrossEntropyLoss' default ignore_index).
inline constexpr int64_t kIgnoreIndex = -100;

// One example before batching. Which fields are used depends on the task.
struct Example {
  std::vector<int32_t> input_ids;       // encoder / model input, special tokens included
  std::vector<int32_t> token_type_ids;  // empty means all 0
  std::vector<int32_t> token_labels;    // token classification: one per input id, -100 = ignore
  std::vector<int32_t> target_ids;      // seq2seq: target tokens without start/end tokens
  int64_t label = kIgnoreIndex;         // sequence classification: class index
};

// A padded batch, row-major. Rows are padded on the right to the longest row of the batch.
struct Batch {
  int64_t batch_size = 0;
  int64_t seq_len = 0;                  // T of input_ids, attention_mask, token_type_ids
  std::vector<int64_t> input_ids;       // [B, T], padding = the tokenizer's pad id
  std::vector<int64_t> attention_mask;  // [B, T], 1 = real token, 0 = padding
  std::vector<int64_t> token_type_ids;  // [B, T], 0 for padding
  // Targets, -100 where ignored. Their shape is [B, label_len]:
  //   MLM, token classification: label_len = T (aligned with input_ids);
  //   causal LM: label_len = T, labels[t] = the token after input_ids[t] (already shifted:
  //     the model must not shift again);
  //   seq2seq: label_len = decoder_seq_len (aligned with decoder_input_ids);
  //   sequence classification: label_len = 1.
  int64_t label_len = 0;
  std::vector<int64_t> labels;
  // Seq2seq only: decoder inputs shifted right from the start token.
  int64_t decoder_seq_len = 0;
  std::vector<int64_t> decoder_input_ids;       // [B, Td]
  std::vector<int64_t> decoder_attention_mask;  // [B, Td]
  // Number of labels != -100: the denominator of a mean loss, and the token count for
  // normalizing over gradient-accumulation steps.
  int64_t num_target_tokens = 0;
};

// Rows [begin, end) of `batch`, padded as the whole batch is (so each row computes what it
// computes in the whole batch): a data-parallel rank's share of a global batch.
Batch batch_rows(const Batch& batch, int64_t begin, int64_t end);

}  // namespace heed::data
