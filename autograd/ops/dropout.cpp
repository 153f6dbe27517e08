// Inverted dropout on a counter-based RNG. Element i takes the i-th 16-bit half of the Philox
// stream of (seed, offset): half-word i % 8 of block offset + i / 8, low half first. It is
// kept when that draw is >= round(p * 65536). Sixteen bits per element halve the Philox work
// of a 32-bit draw and keep p within 2^-17 of what was asked. Forward stores the kept
// elements as one byte each, so backward is a single multiply pass with no RNG.
#include <cmath>

#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/parallel.h"
#include "autograd/node.h"
#include "autograd/ops.h"

namespace heed {
namespace {

constexpr int64_t kElementsPerBlock = 8;  // 16-bit draws per Philox block

uint32_t drop_threshold(double p) {
  return static_cast<uint32_t>(std::lround(p * 65536.0));
}

// out[i] = keep[i] ? x[i] * scale : 0 over contiguous data, with keep[i] from the stream.
Tensor apply_new_mask(const Tensor& x_in, double p, uint64_t seed, uint64_t offset, Tensor& keep) {
  Tensor x = x_in.contiguous();
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  keep = Tensor::empty(x.shape(), DType::u8);
  const int64_t n = x.numel();
  const int64_t blocks = (n + kElementsPerBlock - 1) / kElementsPerBlock;
  const uint32_t threshold = drop_threshold(p);
  uint8_t* k = keep.data<uint8_t>();
  dispatch_float(x.dtype(), "dropout", [&]<typename T>() {
    const T* xp = x.data<T>();
    T* o = out.data<T>();
    const T scale = static_cast<T>(1.0 / (1.0 - p));
    constexpr int64_t kBlocksPerTask = 512;
    parallel_for(
        (blocks + kBlocksPerTask - 1) / kBlocksPerTask, kBlocksPerTask * 32, [&](int64_t t) {
          const int64_t b0 = t * kBlocksPerTask, b1 = std::min(blocks, b0 + kBlocksPerTask);
          uint32_t words[4 * kBlocksPerTask];
          philox4x32_blocks(seed, offset + b0, b1 - b0, words);
          const int64_t i0 = b0 * kElementsPerBlock,
                        count = std::min(n, b1 * kElementsPerBlock) - i0;
          const T* xt = xp + i0;
          T* ot = o + i0;
          uint8_t* kt = k + i0;
          const auto one = [&](int64_t i, uint32_t draw) {
            const uint8_t kept = draw >= threshold;
            kt[i] = kept;
            ot[i] = xt[i] * (static_cast<T>(kept) * scale);
          };
          const int64_t pairs = count / 2;
          for (int64_t j = 0; j < pairs; ++j) {
            one(2 * j, words[j] & 0xFFFFu);
            one(2 * j + 1, words[j] >> 16);
          }
          if (count % 2) one(count - 1, words[pairs] & 0xFFFFu);
        });
  });
  return out;
}

struct DropoutBackward : Node {
  double p;
  const char* name() const override { return "DropoutBackward"; }
  std::vector<Tensor> backward(const Tensor& g_in) override {
    Tensor g = g_in.contiguous(), keep = saved(0);
    Tensor gx = Tensor::empty(g.shape(), g.dtype());
    const int64_t n = g.numel();
    const uint8_t* k = keep.data<uint8_t>();
    dispatch_float(g.dtype(), "dropout backward", [&]<typename T>() {
      const T* gp = g.data<T>();
      T* o = gx.data<T>();
      const T scale = static_cast<T>(1.0 / (1.0 - p));
      constexpr int64_t kChunk = 16384;
      parallel_for((n + kChunk - 1) / kChunk, kChunk, [&](int64_t c) {
        const int64_t i1 = std::min(n, (c + 1) * kChunk);
        for (int64_t i = c * kChunk; i < i1; ++i) o[i] = gp[i] * (static_cast<T>(k[i]) * scale);
      });
    });
    return {gx};
  }
};

}  // namespace

Tensor dropout(const Tensor& a, double p, bool training, Generator& generator) {
  HEED_CHECK(p >= 0.0 && p <= 1.0, "dropout: probability must be in [0, 1], got {}", p);
  if (!training || p == 0.0) return a;
  if (p == 1.0) return mul(a, 0.0);
  const uint64_t seed = generator.seed();
  const uint64_t offset =
      generator.reserve_blocks((a.numel() + kElementsPerBlock - 1) / kElementsPerBlock);
  Tensor keep;
  Tensor out = apply_new_mask(a, p, seed, offset, keep);
  if (needs_grad({&a})) {
    auto node = std::make_shared<DropoutBackward>();
    node->p = p;
    node->save(keep);
    attach_node(out, node, {a});
  }
  return out;
}

}  // namespace heed
