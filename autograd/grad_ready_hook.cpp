#include "autograd/grad_ready_hook.h"

#include <utility>

namespace heed {
namespace {

thread_local GradReadyHook t_hook;

}  // namespace

GradReadyHookScope::GradReadyHookScope(GradReadyHook hook) : previous_(std::move(t_hook)) {
  t_hook = std::move(hook);
}

GradReadyHookScope::~GradReadyHookScope() {
  t_hook = std::move(previous_);
}

void notify_grad_ready(const TensorImpl& leaf) {
  if (t_hook) t_hook(leaf);
}

}  // namespace heed
