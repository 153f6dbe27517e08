#include "autograd/grad_mode.h"

namespace heed {
namespace {
thread_local bool grad_mode_enabled = true;
}

bool grad_enabled() {
  return grad_mode_enabled;
}
void set_grad_enabled(bool enabled) {
  grad_mode_enabled = enabled;
}

}  // namespace heed
