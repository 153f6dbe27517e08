#pragma once
// A call after each leaf's gradient is accumulated in a backward pass. The engine sums every
// contribution to a leaf before its AccumulateGrad runs, so at that call the leaf's .grad is
// final for the pass: data-parallel training starts reducing a bucket of gradients as soon as
// all of its leaves have been seen, while backward goes on with the layers below.
#include <functional>

#include "autograd/tensor.h"

namespace heed {

using GradReadyHook = std::function<void(const TensorImpl& leaf)>;

// Installs `hook` on this thread for the scope's life (the previous one comes back after).
class GradReadyHookScope {
 public:
  explicit GradReadyHookScope(GradReadyHook hook);
  ~GradReadyHookScope();
  GradReadyHookScope(const GradReadyHookScope&) = delete;
  GradReadyHookScope& operator=(const GradReadyHookScope&) = delete;

 private:
  GradReadyHook previous_;
};

// Calls this thread's hook, if any (AccumulateGrad does, after accumulating).
void notify_grad_ready(const TensorImpl& leaf);

}  // namespace heed
