#pragma once
// What models take and return. Ids and masks are i64 tensors [B, T]; a mask is 1 for a
// real token and 0 for padding; labels use -100 for positions that do not count.
#include <vector>

#include "autograd/tensor.h"

namespace heed::nn {

enum class HeadOutputs { logits, predictions, loss_only };

struct ModelInputs {
  Tensor input_ids;
  Tensor attention_mask;          // optional
  Tensor token_type_ids;          // optional (BERT)
  Tensor labels;                  // optional: the loss is computed when present
  Tensor decoder_input_ids;       // encoder-decoder only
  Tensor decoder_attention_mask;  // encoder-decoder only, optional
  // Masked LM with labels: compute the prediction head, and the last layer after its
  // attention, only at the labelled positions (15% of them); the other positions' outputs
  // never reach the loss. The logits are then [M, V]: the labelled positions in row-major
  // order, then (past 16, to one of a few row counts, so that the products' kernels are built
  // once) repeats of the first, labelled -100; ModelOutputs::labels holds their labels.
  bool only_labeled_logits = false;
  // Masked LM: compute the outputs at these rows only (i64 [M], into the flattened [B * T]
  // positions): the logits are [M, V], ModelOutputs::hidden_states [M, H] and, with labels
  // ([B, T]), the loss is over the labelled ones among them and ModelOutputs::labels holds
  // their labels [M]. As only_labeled_logits, the last layer computes only those rows after
  // its attention. Distillation reads the logits and hidden states of every real token so.
  Tensor output_rows;
  // The cross-entropy losses become PyTorch's cross_entropy(label_smoothing=ε); a regression
  // head's MSE loss ignores it.
  double label_smoothing = 0.0;
  // Return each layer's attention probabilities (Hugging Face's output_attentions).
  bool output_attentions = false;
  // With labels, what the caller reads besides the loss: the logits, or only each row's arg max
  // (evaluation's metrics), or nothing (a training step). Without logits a model may leave
  // ModelOutputs::logits undefined: GPT then fuses its head with the cross-entropy
  // (linear_cross_entropy), so that its [B, T, vocab] logits are never held whole.
  HeadOutputs head_outputs = HeadOutputs::logits;
};

struct ModelOutputs {
  Tensor logits;
  Tensor loss;    // scalar, when labels were given
  Tensor labels;  // the labels matching `logits` row by row, when only_labeled_logits
  // With ModelInputs::output_rows: the last layer's hidden states at those rows [M, H].
  Tensor hidden_states;
  // With HeadOutputs::predictions and no logits returned: each row's arg max (i64, shaped as
  // the labels).
  Tensor predictions;
  // With output_attentions, per layer [B, heads, T_query, T_key]: the self-attention of BERT
  // and GPT and of the encoder-decoder's encoder; the decoder's causal self-attention; its
  // cross-attention to the encoder.
  std::vector<Tensor> attentions, decoder_attentions, cross_attentions;
};

}  // namespace heed::nn
