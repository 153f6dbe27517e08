#pragma once
// Gradient checking: the Jacobian from backward against central differences, in float64,
// with PyTorch's defaults (eps 1e-6, atol 1e-5, rtol 1e-3).
#include <functional>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace heed {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};

struct GradcheckResult {
  bool ok = true;
  std::string message;  // the first mismatches, naming input, element and output
  int64_t checked = 0;  // Jacobian entries compared
};

// `inputs` are contiguous f64 tensors; those with requires_grad are checked. `f` must be
// deterministic (seed any randomness inside it).
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                          const std::vector<Tensor>& inputs, GradcheckOptions options = {});

}  // namespace heed
