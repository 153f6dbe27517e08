#pragma once
// Global-norm gradient clipping as torch.nn.utils.clip_grad_norm_ (norm_type 2).
#include <vector>

#include "autograd/tensor.h"
#include "optim/optimizer.h"

namespace heed::optim {

// The L2 norm of all gradients taken together, sqrt(sum of g^2 over every element),
// accumulated in double in a fixed order (so it does not depend on the thread count).
// Parameters without a gradient are skipped.
double grad_norm(const std::vector<Tensor>& params);
// Of every parameter of every group of `optimizer`.
double grad_norm(const Optimizer& optimizer);

// The factor clip_grad_norm_ multiplies every gradient by when their total norm is `total`:
// max_norm / (total + 1e-6) when that is below 1, else 1; and 1 for a non-finite total, which
// clipping leaves alone. Optimizer::step(clip_coefficient(...)) clips inside the update.
double clip_coefficient(double total, double max_norm);

// Scales every gradient by max_norm / (total + 1e-6) when that is below 1, and returns the
// total norm from before clipping. A non-finite total (a NaN or Inf gradient) is returned as
// it is and the gradients are left untouched, so the caller sees it and can skip the step or
// stop (PyTorch would multiply them by NaN or 0, hiding which gradient was bad); with
// error_if_nonfinite it throws instead.
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm,
                       bool error_if_nonfinite = false);
// Every parameter of every group of `optimizer`.
double clip_grad_norm_(const Optimizer& optimizer, double max_norm,
                       bool error_if_nonfinite = false);

}  // namespace heed::optim
