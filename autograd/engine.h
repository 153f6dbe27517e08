#pragma once
#include "autograd/tensor.h"

namespace heed {

// Runs backward from `root` with `grad_root` as d(loss)/d(root) (ones for a scalar root if
// undefined). Nodes run in topological order by dependency counts, on an explicit ready
// stack: no recursion, so graph depth does not touch the call stack. Gradients arriving at
// a node from several consumers are summed before it runs. Leaves accumulate into .grad.
void run_backward(const Tensor& root, const Tensor& grad_root, bool retain_graph);

}  // namespace heed
