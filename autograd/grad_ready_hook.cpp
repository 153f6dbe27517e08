#include "autograd/grad_ready_hook.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "base/error.h"

namespace heed {
namespace {

std::atomic<uint64_t> g_next_id{1};

}  // namespace

GradHookHandle::GradHookHandle(GradHookHandle&& other) noexcept
    : leaf_(std::move(other.leaf_)), id_(std::exchange(other.id_, 0)) {}

GradHookHandle& GradHookHandle::operator=(GradHookHandle&& other) noexcept {
  if (this != &other) {
    remove();
    leaf_ = std::move(other.leaf_);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

void GradHookHandle::remove() {
  if (const std::shared_ptr<TensorImpl> leaf = leaf_.lock()) {
    std::erase_if(leaf->grad_ready_hooks, [this](const auto& hook) { return hook.first == id_; });
  }
  leaf_.reset();
  id_ = 0;
}

GradHookHandle register_post_accumulate_grad_hook(const Tensor& leaf, GradReadyHook hook) {
  HEED_CHECK(leaf.defined() && leaf.is_leaf() && leaf.requires_grad(),
             "a post-accumulate-grad hook needs a leaf tensor that requires a gradient");
  const uint64_t id = g_next_id.fetch_add(1);
  leaf.impl()->grad_ready_hooks.emplace_back(id, std::move(hook));
  return GradHookHandle(leaf.impl_ptr(), id);
}

void notify_grad_ready(const TensorImpl& leaf) {
  for (const auto& [id, hook] : leaf.grad_ready_hooks) hook(leaf);
}

}  // namespace heed
