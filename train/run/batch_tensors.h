#pragma once
// Turns the data layer's plain batches into the tensors models take.
#include "data/batch.h"
#include "nn/models/model_io.h"

namespace heed::train {

nn::ModelInputs to_model_inputs(const data::Batch& batch);
// The batch's labels as an i64 tensor [B, label_len] (or [B] for one label per row).
Tensor labels_tensor(const data::Batch& batch);

}  // namespace heed::train
