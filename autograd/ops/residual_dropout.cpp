// A residual sum with dropout on the block's output, x + dropout(h), alone (pre-LN layers) or
// followed by LayerNorm (post-LN layers), each as one pass: the dropped block output is never
// written whole and read back, and the post-LN backward applies the keep bits to LayerNorm's
// input gradient in the same per-row pass. Same draws, arithmetic and bits as the unfused ops.
#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/dropout_draws.h"
#include "autograd/kernels/layer_norm_rows.h"
#include "autograd/kernels/parallel.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/elementwise.h"
#include "autograd/profile.h"

namespace heed {
namespace {

// The dropout both ops apply: p, 1 / (1 - p) and the reserved stream.
struct Drop {
  double p = 0.0;
  uint64_t seed = 0, offset = 0;
  bool on() const { return p > 0.0; }
};

// s[i] = x[i] + (kept ? h[i] / (1 - p) : 0) for elements [first, first + count) of the
// tensor (first a multiple of 8, so the keep bits of the range start on a byte), writing
// their keep bits; without dropout s = x + h. The sum is taken as add() takes it, after the
// dropped value is written, so the bits are dropout's and add's.
template <typename T>
void residual_dropout_range(const Drop& drop, int64_t first, int64_t count, const T* x, const T* h,
                            T* s, uint8_t* keep_bits) {
  if (!drop.on()) {
    for (int64_t i = 0; i < count; ++i) s[i] = x[i] + h[i];
    return;
  }
  const uint32_t threshold = dropout_threshold(drop.p);
  const T scale = static_cast<T>(1.0 / (1.0 - drop.p));
  uint16_t draws[kMaxDropoutDraws];
  for (int64_t c0 = 0; c0 < count; c0 += kMaxDropoutDraws) {
    const int64_t n = std::min(count - c0, kMaxDropoutDraws);
    dropout_draws(drop.seed, drop.offset, first + c0, n, draws);
    apply_dropout_draws<T>(draws, n, threshold, scale, h + c0, s + c0,
                           keep_bits + (first + c0) / 8);
    for (int64_t i = 0; i < n; ++i) s[c0 + i] = x[c0 + i] + s[c0 + i];
  }
}

// h's gradient from the sum's: g where kept, scaled, as dropout's backward computes it.
template <typename T>
void dropped_gradient_range(double p, const uint8_t* keep_bits, int64_t first, int64_t count,
                            const T* g, T* gh) {
  apply_keep_bits<T>(keep_bits + first / 8, count, static_cast<T>(1.0 / (1.0 - p)), g, gh);
}

Drop reserve_dropout(double p, bool training, Generator& generator, int64_t elements) {
  Drop drop;
  if (!training || p == 0.0) return drop;
  drop.p = p;
  drop.seed = generator.seed();
  drop.offset = generator.reserve_blocks(dropout_blocks(elements));
  return drop;
}

void check_residual(const Tensor& x, const Tensor& h, const char* op) {
  check_same_dtype(x, h, op);
  HEED_CHECK(x.shape() == h.shape(), "{}: the residual {} and the block's output {} differ", op,
             x.shape_str(), h.shape_str());
}

struct ResidualDropoutBackward : Node {
  double p = 0.0;
  const char* name() const override { return "ResidualDropoutBackward"; }
  std::vector<Tensor> backward(const Tensor& g_in) override {
    Tensor keep = saved(0);
    Tensor g = g_in.contiguous();
    Tensor gh = Tensor::empty(g.shape(), g.dtype());
    const int64_t n = g.numel();
    dispatch_float(g.dtype(), "residual_dropout backward", [&]<typename T>() {
      constexpr int64_t kChunk = 16384;  // a multiple of 8: each chunk starts on a mask byte
      parallel_for((n + kChunk - 1) / kChunk, kChunk, [&](int64_t c) {
        const int64_t i0 = c * kChunk;
        dropped_gradient_range<T>(p, keep.data<uint8_t>(), i0, std::min(kChunk, n - i0),
                                  g.data<T>() + i0, gh.data<T>() + i0);
      });
    });
    return {g, gh};
  }
};

struct ResidualDropoutLayerNormBackward : Node {
  double p = 0.0;  // 0: no dropout was applied and nothing is saved for it
  int64_t rows = 0, width = 0;
  const char* name() const override { return "ResidualDropoutLayerNormBackward"; }
  std::vector<Tensor> backward(const Tensor& g_in) override {
    Tensor s = saved(0), w = saved(1), stats = saved(2);
    Tensor g = g_in.contiguous();
    // LayerNorm's input gradient is the residual's gradient. Not written over the incoming
    // one: GCC's alias checks then send the row loops down their scalar versions.
    Tensor gs = Tensor::empty(s.shape(), s.dtype());
    Tensor gw = zeros({width}, s.dtype()), gb = zeros({width}, s.dtype());
    Tensor gh = p > 0.0 ? Tensor::empty(s.shape(), s.dtype()) : gs;
    const uint8_t* keep = p > 0.0 ? saved(3).data<uint8_t>() : nullptr;
    dispatch_float(s.dtype(), "residual_dropout_layer_norm backward", [&]<typename T>() {
      T* gsp = gs.data<T>();
      T* ghp = gh.data<T>();
      layer_norm_backward_rows<T>(s.data<T>(), g.data<T>(), w.data<T>(), stats.data<T>(), rows,
                                  width, gsp, gw.data<T>(), gb.data<T>(), [&](int64_t r) {
                                    if (keep) {
                                      dropped_gradient_range<T>(p, keep, r * width, width,
                                                                gsp + r * width, ghp + r * width);
                                    }
                                  });
    });
    return {gs, gh, gw, gb};
  }
};

}  // namespace

Tensor residual_dropout(const Tensor& x_in, const Tensor& h_in, double p, bool training,
                        Generator& generator) {
  OpTimer timer("residual_dropout");
  HEED_CHECK(p >= 0.0 && p <= 1.0, "residual_dropout: probability must be in [0, 1], got {}", p);
  check_residual(x_in, h_in, "residual_dropout");
  // Without dropout there is nothing to fuse; with p = 1 dropout() has its own case.
  if (!training || p == 0.0) return add(x_in, h_in);
  if (p == 1.0) return add(x_in, dropout(h_in, p, training, generator));
  Tensor x = x_in.contiguous(), h = h_in.contiguous();
  const int64_t n = x.numel();
  const Drop drop = reserve_dropout(p, training, generator, n);
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  Tensor keep = Tensor::empty({keep_mask_bytes(n)}, DType::u8);
  dispatch_float(x.dtype(), "residual_dropout", [&]<typename T>() {
    constexpr int64_t kTask = kMaxDropoutDraws;  // a multiple of 8, as the ranges need
    parallel_for((n + kTask - 1) / kTask, kTask * 4, [&](int64_t t) {
      const int64_t i0 = t * kTask;
      residual_dropout_range<T>(drop, i0, std::min(n - i0, kTask), x.data<T>() + i0,
                                h.data<T>() + i0, out.data<T>() + i0, keep.data<uint8_t>());
    });
  });
  if (needs_grad({&x_in, &h_in})) {
    auto node = std::make_shared<ResidualDropoutBackward>();
    node->p = p;
    node->save(keep);
    attach_node(out, node, {x_in, h_in});
  }
  return out;
}

Tensor residual_dropout_layer_norm(const Tensor& x_in, const Tensor& h_in, double p, bool training,
                                   Generator& generator, const Tensor& weight, const Tensor& bias,
                                   double eps) {
  OpTimer timer("residual_dropout_layer_norm");
  HEED_CHECK(p >= 0.0 && p <= 1.0,
             "residual_dropout_layer_norm: probability must be in [0, 1], got {}", p);
  check_residual(x_in, h_in, "residual_dropout_layer_norm");
  const int64_t width = x_in.size(-1);
  // Rows whose keep bits do not start on a byte would share bytes between threads.
  if (p == 1.0 || (training && p > 0.0 && width % 8 != 0)) {
    return layer_norm(add(x_in, dropout(h_in, p, training, generator)), weight, bias, eps);
  }
  HEED_CHECK(
      weight.dim() == 1 && weight.size(0) == width && bias.dim() == 1 && bias.size(0) == width,
      "residual_dropout_layer_norm: weight {} and bias {} must be [{}] for input {}",
      weight.shape_str(), bias.shape_str(), width, x_in.shape_str());
  HEED_CHECK(x_in.dtype() == weight.dtype() && x_in.dtype() == bias.dtype(),
             "residual_dropout_layer_norm: dtypes differ: input {}, weight {}, bias {}",
             x_in.dtype(), weight.dtype(), bias.dtype());
  Tensor x = x_in.contiguous(), h = h_in.contiguous(), w = weight.contiguous(),
         b = bias.contiguous();
  const int64_t rows = width > 0 ? x.numel() / width : 0;
  const Drop drop = reserve_dropout(p, training, generator, x.numel());
  Tensor s = Tensor::empty(x.shape(), x.dtype());  // the sum, LayerNorm's input
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  Tensor stats = Tensor::empty({rows, 2}, x.dtype());
  Tensor keep = drop.on() ? Tensor::empty({keep_mask_bytes(x.numel())}, DType::u8) : Tensor();
  dispatch_float(x.dtype(), "residual_dropout_layer_norm", [&]<typename T>() {
    uint8_t* bits = drop.on() ? keep.data<uint8_t>() : nullptr;
    parallel_for(rows, width * 2, [&](int64_t r) {
      const int64_t i0 = r * width;
      residual_dropout_range<T>(drop, i0, width, x.data<T>() + i0, h.data<T>() + i0,
                                s.data<T>() + i0, bits);
      layer_norm_row<T>(s.data<T>() + i0, width, w.data<T>(), b.data<T>(), eps, out.data<T>() + i0,
                        stats.data<T>() + 2 * r);
    });
  });
  if (needs_grad({&x_in, &h_in, &weight, &bias})) {
    auto node = std::make_shared<ResidualDropoutLayerNormBackward>();
    node->p = drop.p;
    node->rows = rows;
    node->width = width;
    node->save(s);
    node->save(w);
    node->save(stats);
    if (drop.on()) node->save(keep);
    attach_node(out, node, {x_in, h_in, weight, bias});
  }
  return out;
}

}  // namespace heed
