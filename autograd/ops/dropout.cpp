// Inverted dropout on a counter-based RNG (the stream of kernels/dropout_draws.h). Forward
// stores the kept elements as one bit each, so backward is a single multiply pass with no
// RNG.
#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/dropout_draws.h"
#include "autograd/kernels/parallel.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/elementwise.h"
#include "base/profile.h"

namespace heed {
namespace {

// out[i] = keep[i] ? x[i] / (1 - p) : 0 over contiguous data, keep[i] from the stream.
Tensor apply_new_mask(const Tensor& x_in, double p, uint64_t seed, uint64_t offset, Tensor& keep) {
  Tensor x = x_in.contiguous();
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  keep = Tensor::empty({keep_mask_bytes(x.numel())}, DType::u8);
  const int64_t n = x.numel();
  const uint32_t threshold = dropout_threshold(p);
  uint8_t* k = keep.data<uint8_t>();
  dispatch_float(x.dtype(), "dropout", [&]<typename T>() {
    const T* xp = x.data<T>();
    T* o = out.data<T>();
    const T scale = static_cast<T>(1.0 / (1.0 - p));
    constexpr int64_t kTask = kMaxDropoutDraws;
    parallel_for((n + kTask - 1) / kTask, kTask * 4, [&](int64_t t) {
      const int64_t i0 = t * kTask, count = std::min(n - i0, kTask);
      uint16_t draws[kTask];
      dropout_draws(seed, offset, i0, count, draws);
      apply_dropout_draws<T>(draws, count, threshold, scale, xp + i0, o + i0, k + i0 / 8);
    });
  });
  return out;
}

struct DropoutBackward : Node {
  double p;
  SavedTensor keep{this};  // the kept elements, a bit each
  const char* name() const override { return "DropoutBackward"; }
  std::vector<Tensor> backward(const Tensor& g_in) override;
};

}  // namespace

Tensor dropout(const Tensor& a, double p, bool training, Generator& generator) {
  OpTimer timer("dropout");
  HEED_CHECK(p >= 0.0 && p <= 1.0, "dropout: probability must be in [0, 1], got {}", p);
  if (!training || p == 0.0) return a;
  if (p == 1.0) return mul(a, 0.0);
  const uint64_t seed = generator.seed();
  const uint64_t offset = generator.reserve_blocks(dropout_blocks(a.numel()));
  Tensor keep;
  Tensor out = apply_new_mask(a, p, seed, offset, keep);
  if (needs_grad({&a})) {
    auto node = std::make_shared<DropoutBackward>();
    node->p = p;
    node->keep.save(keep);
    attach_node(out, node, {a});
  }
  return out;
}

std::vector<Tensor> DropoutBackward::backward(const Tensor& g_in) {
  const Tensor keep_bits = keep.get();
  Tensor gx = reusable_gradient(g_in, g_in.shape());
  Tensor g = g_in.contiguous();
  const int64_t n = g.numel();
  const uint8_t* k = keep_bits.data<uint8_t>();
  dispatch_float(g.dtype(), "dropout backward", [&]<typename T>() {
    const T* gp = g.data<T>();
    T* o = gx.data<T>();
    const T scale = static_cast<T>(1.0 / (1.0 - p));
    constexpr int64_t kChunk = 16384;  // a multiple of 8: each chunk starts on a mask byte
    parallel_for((n + kChunk - 1) / kChunk, kChunk, [&](int64_t c) {
      const int64_t i0 = c * kChunk;
      apply_keep_bits<T>(k + i0 / 8, std::min(kChunk, n - i0), scale, gp + i0, o + i0);
    });
  });
  return {gx};
}

}  // namespace heed
