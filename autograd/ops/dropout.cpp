// Inverted dropout on a counter-based RNG: element i is kept when the i-th Philox draw of
// (seed, offset) is >= p. Backward redraws the same mask instead of storing it.
#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/parallel.h"
#include "autograd/node.h"
#include "autograd/ops.h"

namespace heed {
namespace {

// out[i] = keep(i) ? x[i] * scale : 0, over contiguous data.
Tensor apply_mask(const Tensor& x_in, double p, uint64_t seed, uint64_t offset) {
  Tensor x = x_in.contiguous();
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  const int64_t n = x.numel();
  const int64_t blocks = (n + 3) / 4;
  const float threshold = static_cast<float>(p);
  dispatch_float(x.dtype(), "dropout", [&]<typename T>() {
    const T* xp = x.data<T>();
    T* o = out.data<T>();
    const T scale = static_cast<T>(1.0 / (1.0 - p));
    constexpr int64_t kBlocksPerTask = 1024;
    parallel_for(
        (blocks + kBlocksPerTask - 1) / kBlocksPerTask, kBlocksPerTask * 16, [&](int64_t t) {
          const int64_t b0 = t * kBlocksPerTask, b1 = std::min(blocks, b0 + kBlocksPerTask);
          uint32_t draws[4 * kBlocksPerTask];
          philox4x32_blocks(seed, offset + b0, b1 - b0, draws);
          const int64_t i0 = b0 * 4, i1 = std::min(n, b1 * 4);
          const T* x_task = xp + i0;
          T* out_task = o + i0;
          for (int64_t i = 0; i < i1 - i0; ++i) {
            out_task[i] = uint_to_unit_float(draws[i]) >= threshold ? x_task[i] * scale : T(0);
          }
        });
  });
  return out;
}

struct DropoutBackward : Node {
  double p;
  uint64_t seed, offset;
  const char* name() const override { return "DropoutBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override {
    return {apply_mask(g, p, seed, offset)};
  }
};

}  // namespace

Tensor dropout(const Tensor& a, double p, bool training, Generator& generator) {
  HEED_CHECK(p >= 0.0 && p <= 1.0, "dropout: probability must be in [0, 1], got {}", p);
  if (!training || p == 0.0) return a;
  if (p == 1.0) return mul(a, 0.0);
  const uint64_t seed = generator.seed();
  const uint64_t offset = generator.reserve_blocks((a.numel() + 3) / 4);
  Tensor out = apply_mask(a, p, seed, offset);
  if (needs_grad({&a})) {
    auto node = std::make_shared<DropoutBackward>();
    node->p = p;
    node->seed = seed;
    node->offset = offset;
    attach_node(out, node, {a});
  }
  return out;
}

}  // namespace heed
