// self_attention_qkv: a layer's self-attention from its packed query/key/value projection.
// Through separate ops the three are slices of one [B, T, 3C] tensor: backward fills a zero
// [B, T, 3C] gradient and adds each slice's gradient into it (a pass over 3C columns and three
// over C), and a bf16 product first copies each strided head into a dense one. Here the
// products read the heads as views of the projection (or of its one bf16 rounding), and
// backward's products write the query, key and value gradients straight into their columns of
// one gradient tensor. Softmax, dropout and recomputation are attention_dropout_values'.
#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/kernels/dropout_draws.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/attention_softmax_rows.h"
#include "autograd/ops/matmul_impl.h"
#include "base/profile.h"

namespace heed {
namespace {

// Columns [part * C, (part + 1) * C) of a contiguous [B, T, W] tensor as heads [B, h, T, d]
// (d = C / h): a view, no copy. Part 0 is the query, 1 the key, 2 the value.
Tensor heads_of(const Tensor& t, int64_t part, int64_t C, int64_t heads) {
  const int64_t B = t.size(0), T = t.size(1), W = t.size(2), d = C / heads;
  return Tensor::from_storage(t.storage(), {B, heads, T, d}, {T * W, d, W, 1},
                              t.offset() + part * C, t.dtype());
}

// Products write into views of [B, T, 3C] and [B, T, C] memory: matmul_into takes any
// destination with a unit-stride last dim. A new [B, h, T, T] tensor of q . k^T, or of the value
// gradient's g . v^T.
Tensor scores_of(const Tensor& a, const Tensor& b, DType dtype) {
  Tensor out = Tensor::empty({a.size(0), a.size(1), a.size(2), b.size(2)}, dtype);
  matmul_into(a, b.transpose(-1, -2), Tensor(), out);
  return out;
}

struct SelfAttentionQkvBackward : Node {
  int64_t heads = 1;
  double scale = 1.0, p = 0.0;
  DType qkv_dtype = DType::f32;  // of qkv as given (`projection` may be its bf16 copy)
  // The projection as the products read it, the undropped probabilities, and with dropout
  // the keep bits.
  SavedTensor projection{this}, probs{this}, keep_bits{this};
  const char* name() const override { return "SelfAttentionQkvBackward"; }
  std::vector<Tensor> backward(const Tensor& g_in) override;
};

}  // namespace

Tensor self_attention_qkv(const Tensor& qkv_in, int64_t heads, const Tensor& mask, bool causal,
                          double p, Generator* generator, Tensor* probs) {
  OpTimer timer("self_attention_qkv");
  HEED_CHECK(
      heads > 0 && qkv_in.dim() == 3 && qkv_in.size(2) > 0 && qkv_in.size(2) % (3 * heads) == 0,
      "self_attention_qkv: qkv {} must be [B, T, 3C] with C a positive multiple of {} heads",
      qkv_in.shape_str(), heads);
  HEED_CHECK(qkv_in.dtype() == DType::f32 || qkv_in.dtype() == DType::f64,
             "self_attention_qkv: expected f32 or f64, got {}", qkv_in.dtype());
  HEED_CHECK(p >= 0.0 && p < 1.0, "self_attention_qkv: dropout must be in [0, 1), got {}", p);
  HEED_CHECK(p == 0.0 || generator != nullptr, "self_attention_qkv: dropout needs a generator");
  const int64_t B = qkv_in.size(0), T = qkv_in.size(1), C = qkv_in.size(2) / 3;
  const double scale = 1.0 / std::sqrt(static_cast<double>(C / heads));
  const bool bf16_products =
      qkv_in.dtype() == DType::f32 && matmul_precision() == MatmulPrecision::bf16;
  Tensor qkv, y, keep, out = Tensor::empty({B, T, C}, qkv_in.dtype());
  {
    NoGradGuard no_grad;
    // bf16 products read one rounding of the whole projection; backward reuses it.
    qkv = qkv_in.contiguous();
    if (bf16_products) qkv = shared_bf16_copy(qkv);
    if (out.numel() > 0) {
      const Tensor scores =
          scores_of(heads_of(qkv, 0, C, heads), heads_of(qkv, 1, C, heads), qkv_in.dtype());
      Tensor dropped;
      if (p > 0.0) {
        // The stream attention_dropout_values would draw from for these scores.
        const RowDropout drop{p, generator->seed(),
                              generator->reserve_blocks(dropout_blocks(scores.numel())),
                              bf16_products};
        dropped = attention_softmax_rows(scores, scale, mask, causal, &drop, &y, &keep);
      } else {
        y = dropped =
            attention_softmax_rows(scores, scale, mask, causal, nullptr, nullptr, nullptr);
      }
      // The heads' outputs land in [B, T, h, d] memory: merged without a copy.
      matmul_into(dropped, heads_of(qkv, 2, C, heads), Tensor(), heads_of(out, 0, C, heads));
    } else {
      y = Tensor::empty({B, heads, T, T}, qkv_in.dtype());
    }
  }
  if (probs) *probs = y;
  if (needs_grad({&qkv_in})) {
    auto node = std::make_shared<SelfAttentionQkvBackward>();
    node->heads = heads;
    node->scale = scale;
    node->p = p;
    node->qkv_dtype = qkv_in.dtype();
    node->projection.save_copy_of(qkv, qkv_in);
    node->probs.save(y);
    if (p > 0.0) node->keep_bits.save(keep);
    attach_node(out, node, {qkv_in});
  }
  return out;
}

std::vector<Tensor> SelfAttentionQkvBackward::backward(const Tensor& g_in) {
  const Tensor qkv = projection.get(), y = probs.get();
  const Tensor keep = p > 0.0 ? keep_bits.get() : Tensor();
  const int64_t B = qkv.size(0), T = qkv.size(1), C = qkv.size(2) / 3;
  const bool bf16 = qkv.dtype() == DType::bf16;
  // Every product reads g: round it once when they run in bf16.
  Tensor g = g_in.contiguous();
  if (bf16 && g.dtype() == DType::f32) g = to_bf16_keep_layout(g);
  const Tensor g_heads = heads_of(g, 0, C, heads);
  Tensor grad = Tensor::empty({B, T, 3 * C}, qkv_dtype);
  if (grad.numel() == 0) return {grad};
  {
    // d(dropped . v)/dv = dropped^T . g; the dropped probabilities live only for this product.
    Tensor dropped = p > 0.0 ? recompute_dropped(y, keep, p, bf16) : y;
    matmul_into(dropped.transpose(-1, -2), g_heads, Tensor(), heads_of(grad, 2, C, heads));
  }
  // The probabilities' gradient g . v^T, turned into the scores' in its own memory.
  const Tensor v = heads_of(qkv, 2, C, heads);
  Tensor g_scores =
      p > 0.0
          ? attention_softmax_dropout_backward(scores_of(g_heads, v, y.dtype()), y, keep, scale, p)
          : attention_softmax_backward(scores_of(g_heads, v, y.dtype()), y, scale);
  if (bf16) g_scores = to_bf16_keep_layout(g_scores);
  // scores = q . k^T: dq = g_scores . k, dk = g_scores^T . q.
  matmul_into(g_scores, heads_of(qkv, 1, C, heads), Tensor(), heads_of(grad, 0, C, heads));
  matmul_into(g_scores.transpose(-1, -2), heads_of(qkv, 0, C, heads), Tensor(),
              heads_of(grad, 1, C, heads));
  return {grad};
}

}  // namespace heed
