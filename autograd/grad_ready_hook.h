#pragma once
// PyTorch's Tensor.register_post_accumulate_grad_hook: a call each time a backward pass has
// accumulated a leaf's gradient. The engine sums every contribution to a leaf before its
// AccumulateGrad runs, so at that call the leaf's .grad is final for the pass. Data-parallel
// training attaches one to every parameter and starts summing a bucket of gradients over the
// ranks as soon as all of its leaves are final, while backward goes on with the layers below.
#include <cstdint>
#include <functional>
#include <memory>

#include "autograd/tensor.h"

namespace heed {

using GradReadyHook = std::function<void(const TensorImpl& leaf)>;

// Removes its hook when destroyed (PyTorch's RemovableHandle): the hook's owner holds it, so a
// hook never outlives what it calls into. A handle may outlive its tensor.
class GradHookHandle {
 public:
  GradHookHandle() = default;
  GradHookHandle(std::weak_ptr<TensorImpl> leaf, uint64_t id) : leaf_(std::move(leaf)), id_(id) {}
  ~GradHookHandle() { remove(); }
  GradHookHandle(GradHookHandle&& other) noexcept;
  GradHookHandle& operator=(GradHookHandle&& other) noexcept;
  GradHookHandle(const GradHookHandle&) = delete;
  GradHookHandle& operator=(const GradHookHandle&) = delete;

  void remove();

 private:
  std::weak_ptr<TensorImpl> leaf_;
  uint64_t id_ = 0;
};

// Calls `hook` after each backward pass has accumulated `leaf`'s gradient, until the handle
// goes. `leaf` must be a leaf that requires a gradient.
[[nodiscard]] GradHookHandle register_post_accumulate_grad_hook(const Tensor& leaf,
                                                                GradReadyHook hook);

// Calls `leaf`'s hooks in the order they were registered (AccumulateGrad does, after
// accumulating).
void notify_grad_ready(const TensorImpl& leaf);

}  // namespace heed
