#include "train/run/batch_tensors.h"

#include "autograd/ops.h"

namespace heed::train {

Tensor labels_tensor(const data::Batch& b) {
  if (b.labels.empty()) return Tensor();
  if (b.label_len == 1) return from_vector<int64_t>(b.labels, {b.batch_size});
  return from_vector<int64_t>(b.labels, {b.batch_size, b.label_len});
}

nn::ModelInputs to_model_inputs(const data::Batch& b) {
  nn::ModelInputs in;
  const Shape shape{b.batch_size, b.seq_len};
  in.input_ids = from_vector<int64_t>(b.input_ids, shape);
  if (!b.attention_mask.empty()) in.attention_mask = from_vector<int64_t>(b.attention_mask, shape);
  if (!b.token_type_ids.empty()) in.token_type_ids = from_vector<int64_t>(b.token_type_ids, shape);
  in.labels = labels_tensor(b);
  if (b.decoder_seq_len > 0) {
    const Shape dshape{b.batch_size, b.decoder_seq_len};
    in.decoder_input_ids = from_vector<int64_t>(b.decoder_input_ids, dshape);
    if (!b.decoder_attention_mask.empty()) {
      in.decoder_attention_mask = from_vector<int64_t>(b.decoder_attention_mask, dshape);
    }
  }
  return in;
}

}  // namespace heed::train
