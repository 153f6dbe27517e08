// Matrix products: matmul (2-D and batched, broadcast batch dims) and the precision switch.
#include <algorithm>
#include <numeric>

#include "autograd/grad_mode.h"
#include "autograd/kernels/matmul_reference.h"
#include "autograd/kernels/onednn_matmul.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/wide_loops.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/matmul_impl.h"
#include "base/profile.h"

namespace heed {
namespace {

MatmulPrecision g_precision = MatmulPrecision::f32;

// A view of `t` with leading size-1 dims added up to `nd` dims (no autograd: geometry only).
Tensor with_leading_ones(const Tensor& t, int64_t nd) {
  if (t.dim() == nd) return t;
  Shape shape = t.shape(), strides = t.strides();
  const int64_t lead = nd - t.dim();
  shape.insert(shape.begin(), lead, 1);
  strides.insert(strides.begin(), lead, t.numel());
  return Tensor::from_storage(t.storage(), shape, strides, t.offset(), t.dtype());
}

// The same view of the storage's bf16 copy, made now if the storage changed since the last.
Tensor view_of_bf16_copy(const Tensor& t) {
  Storage& storage = *t.storage();
  std::shared_ptr<Storage> copy = storage.bf16_copy_at(storage.version());
  if (!copy) {
    const int64_t n = static_cast<int64_t>(storage.nbytes() / sizeof(float));
    copy = std::make_shared<Storage>(n * sizeof(bf16));
    const float* src = static_cast<const float*>(storage.data());
    bf16* dst = static_cast<bf16*>(copy->data());
    constexpr int64_t kChunk = 16384;
    parallel_for((n + kChunk - 1) / kChunk, kChunk, [&](int64_t c) {
      const int64_t begin = c * kChunk;
      wide::round_to_bf16(src + begin, std::min(n, begin + kChunk) - begin, dst + begin);
    });
    storage.set_bf16_copy(copy);
  }
  return Tensor::from_storage(copy, t.shape(), t.strides(), t.offset(), DType::bf16);
}

// t's dims from the outermost in memory to the innermost (by stride; ties keep dim order).
Shape memory_order(const Tensor& t) {
  Shape order(t.dim());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return t.strides()[x] > t.strides()[y]; });
  return order;
}

Shape inverse_permutation(const Shape& order) {
  Shape inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[order[i]] = static_cast<int64_t>(i);
  return inverse;
}

// The output of a product, dense in `like`'s memory order when that keeps the last dim
// innermost (oneDNN writes such a destination in place), else contiguous. A product of
// attention's heads, [B, h, T, d] views of [B, T, h, d] memory, then writes [B, T, h, d]
// memory too: merging the heads, or a gradient reaching the projection that split them, is a
// view instead of a copy. f64 (the reference kernel) is always contiguous.
Tensor empty_laid_out_like(const Shape& shape, DType dtype, const Tensor& like) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  if (dtype == DType::f64 || like.dim() != nd || nd < 3) return Tensor::empty(shape, dtype);
  const Shape order = memory_order(like);
  if (order.back() != nd - 1) return Tensor::empty(shape, dtype);
  Shape ordered_shape(nd);
  for (int64_t i = 0; i < nd; ++i) ordered_shape[i] = shape[order[i]];
  return Tensor::empty(ordered_shape, dtype).permute(inverse_permutation(order));
}

// a . b (no autograd) with broadcast batch dims, into a new tensor laid out like `like`.
Tensor product_laid_out_like(const Tensor& a, const Tensor& b, const Tensor& like) {
  const Shape a_batch(a.shape().begin(), a.shape().end() - 2);
  const Shape b_batch(b.shape().begin(), b.shape().end() - 2);
  Shape shape = broadcast_shapes(a_batch, b_batch, "matmul (batch dims)");
  shape.push_back(a.size(-2));
  shape.push_back(b.size(-1));
  const bool f64 = a.dtype() == DType::f64 || b.dtype() == DType::f64;
  Tensor out = empty_laid_out_like(shape, f64 ? DType::f64 : DType::f32, like);
  if (out.numel() == 0) return out;
  NoGradGuard no_grad;
  if (a.size(-1) == 0) {
    out.zero_();
  } else {
    matmul_into(a, b, Tensor(), out);
  }
  return out;
}

struct MatmulBackward : Node {
  DType a_dtype, b_dtype;  // of the operands as given (saved may be their bf16 copies)
  SavedTensor a_operand{this}, b_operand{this};  // the operands as the product read them
  const char* name() const override { return "MatmulBackward"; }
  std::vector<Tensor> backward(const Tensor& g_in) override;
};

}  // namespace

// A transposed view converts as the dense tensor underneath and stays a transposed view, so
// no operand is ever physically transposed.
Tensor to_bf16_keep_layout(const Tensor& t) {
  if (t.dtype() == DType::bf16) return t;
  if (t.dtype() == DType::f32 && t.storage()->keeps_bf16_copy()) return view_of_bf16_copy(t);
  const Shape order = memory_order(t);
  Tensor dense_order = t.permute(order);
  if (!dense_order.is_contiguous()) return t.to(DType::bf16);
  return dense_order.to(DType::bf16).permute(inverse_permutation(order));
}

Tensor shared_bf16_copy(const Tensor& t) {
  const bool whole_storage =
      t.dtype() == DType::f32 && t.is_contiguous() && t.offset() == 0 &&
      static_cast<size_t>(t.numel()) * sizeof(float) == t.storage()->nbytes();
  return whole_storage ? view_of_bf16_copy(t) : to_bf16_keep_layout(t);
}

void set_matmul_precision(MatmulPrecision precision) {
  g_precision = precision;
}
MatmulPrecision matmul_precision() {
  return g_precision;
}
bool native_bf16_products() {
  return onednn_bf16_matmul_available();
}

void matmul_into(const Tensor& a_in, const Tensor& b_in, const Tensor& bias, const Tensor& out,
                 bool pack_b, PackedOperands* reuse) {
  const int64_t nd = out.dim();
  Tensor a = with_leading_ones(a_in, nd), b = with_leading_ones(b_in, nd);
  if (a.dtype() == DType::f64) {
    matmul_reference<double>(a, b, bias, out);
    return;
  }
  const bool use_bf16 =
      a.dtype() == DType::bf16 || b.dtype() == DType::bf16 || g_precision == MatmulPrecision::bf16;
  if (use_bf16) {
    NoGradGuard no_grad;
    Tensor a16 = to_bf16_keep_layout(a);
    if (onednn_bf16_matmul_available()) {
      // A packed weight is rounded as it is packed: no bf16 copy of it is made or kept.
      if (pack_b && onednn_matmul_packed(a16, b, bias, out, reuse)) return;
      onednn_matmul(a16, to_bf16_keep_layout(b), bias, out);
    } else {
      // No bf16 kernel on this CPU: the same numbers (bf16-rounded inputs, f32 accumulation)
      // from the f32 kernel. b32 is this call's own copy: nothing to share with other calls.
      Tensor a32 = a16.to(DType::f32), b32 = to_bf16_keep_layout(b).to(DType::f32);
      if (pack_b && onednn_matmul_packed(a32, b32, bias, out)) return;
      onednn_matmul(a32, b32, bias, out);
    }
  } else {
    if (pack_b && onednn_matmul_packed(a, b, bias, out, reuse)) return;
    onednn_matmul(a, b, bias, out);
  }
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  OpTimer timer("matmul");
  HEED_CHECK(a.dim() >= 2 && b.dim() >= 2, "matmul: needs at least 2-D operands, got {} and {}",
             a.shape_str(), b.shape_str());
  HEED_CHECK(a.size(-1) == b.size(-2), "matmul: inner sizes differ: {} x {}", a.shape_str(),
             b.shape_str());
  const bool f64 = a.dtype() == DType::f64 || b.dtype() == DType::f64;
  HEED_CHECK(!f64 || a.dtype() == b.dtype(), "matmul: dtypes differ: {} {} x {} {}", a.dtype(),
             a.shape_str(), b.dtype(), b.shape_str());
  for (const Tensor* t : {&a, &b}) {
    HEED_CHECK(is_floating(t->dtype()), "matmul: expected floating operands, got {} {}", t->dtype(),
               t->shape_str());
  }
  // bf16 products round each operand once, here; backward reuses these copies (attention's
  // q, k, v and probabilities are then held in half the memory).
  Tensor a_operand = a, b_operand = b;
  if (!f64 && g_precision == MatmulPrecision::bf16) {
    NoGradGuard no_grad;
    a_operand = to_bf16_keep_layout(a);
    b_operand = to_bf16_keep_layout(b);
  }
  // The output's rows and batch dims are laid out as b's: attention's probabilities times
  // the values [B, h, Tk, d], a view of [B, Tk, h, d] memory, give [B, Tq, h, d] memory.
  Tensor out = product_laid_out_like(a_operand, b_operand, b);
  if (needs_grad({&a, &b})) {
    auto node = std::make_shared<MatmulBackward>();
    node->a_dtype = a.dtype();
    node->b_dtype = b.dtype();
    node->a_operand.save_copy_of(a_operand, a);
    node->b_operand.save_copy_of(b_operand, b);
    attach_node(out, node, {a, b});
  }
  return out;
}

std::vector<Tensor> MatmulBackward::backward(const Tensor& g_in) {
  const Tensor a = a_operand.get(), b = b_operand.get();
  // Products with a bf16 operand run in bf16: round the gradient once for both of them.
  Tensor g = g_in;
  if (g.dtype() == DType::f32 && (a.dtype() == DType::bf16 || b.dtype() == DType::bf16)) {
    g = to_bf16_keep_layout(g);
  }
  // Each gradient is laid out as its operand was: attention's query, key and value
  // gradients then reach their projections as [B, T, C] without a copy.
  Tensor ga, gb;
  if (next_edges[0]) ga = sum_to(product_laid_out_like(g, b.transpose(-1, -2), a), a.shape());
  if (next_edges[1]) {
    if (b.dim() == 2 && a.dim() > 2 && a.is_contiguous() && g.is_contiguous()) {
      // b was shared by every batch: fold the batch into the rows, one product.
      Tensor a2 = a.reshape({-1, a.size(-1)});
      Tensor g2 = g.reshape({-1, g.size(-1)});
      gb = matmul(a2.transpose(0, 1), g2);
    } else if (b.dim() > 2 && memory_order(b).back() == b.dim() - 2) {
      // b is a transposed view (attention's k^T): its gradient is (g^T . a)^T, written in
      // the memory order of the tensor b transposes.
      const Tensor bt = b.transpose(-1, -2);
      gb = sum_to(product_laid_out_like(g.transpose(-1, -2), a, bt).transpose(-1, -2), b.shape());
    } else {
      gb = sum_to(product_laid_out_like(a.transpose(-1, -2), g, b), b.shape());
    }
  }
  if (ga.defined() && ga.dtype() != a_dtype) ga = ga.to(a_dtype);
  if (gb.defined() && gb.dtype() != b_dtype) gb = gb.to(b_dtype);
  return {ga, gb};
}

}  // namespace heed
