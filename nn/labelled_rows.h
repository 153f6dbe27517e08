#pragma once
// The labelled positions of a batch, for a head that runs on them alone (a masked-LM head
// labels 15% of the positions; the others never reach the loss).
#include "autograd/tensor.h"

namespace heed::nn {

struct LabelledRows {
  // i64 [P]: the positions whose label is not -100, as indices into the flattened labels in
  // row-major order; then, past 16, repeats of the first up to P = padded_row_count(M), so
  // that the products' kernels are built for a few row counts only (nn/padded_rows.h).
  Tensor rows;
  // i64 [P]: their labels, row by row; -100 for the repeats, which add nothing to the loss or
  // the gradients.
  Tensor labels;
};

// The labelled rows of labels (integer, any shape; -100 = no label). Copies them to the host.
LabelledRows labelled_rows(const Tensor& labels);

// The labels (integer, any shape) at `rows` (i64 [M], indices into the flattened labels): i64
// [M]. Throws for a row out of range.
Tensor labels_at_rows(const Tensor& labels, const Tensor& rows);

}  // namespace heed::nn
