// A Linear's weight gradient (onednn_transposed_product) as oneDNN's inner-product backward
// weights, whose gemm reads both operands as they are.
#include <mutex>

#include "autograd/kernels/onednn_matmul.h"
#include "autograd/kernels/onednn_primitives.h"
#include "base/profile.h"

namespace heed {
namespace {

// Outputs from which a weight gradient runs as the packed matmul rather than oneDNN's
// inner-product gemm: below it the gemm was 7-12% faster.
constexpr int64_t kMinOutputsForPackedWeightGradient = 2048;

// A weight-gradient primitive for one geometry, with the descriptors it was built with.
struct WeightGradientEntry {
  dnnl::inner_product_backward_weights primitive;
  dnnl::memory::desc src, diff_dst, diff_weights;
};

struct WeightGradientCache {
  std::mutex mutex;
  LruCache<PrimitiveKey, WeightGradientEntry, PrimitiveKeyHash> entries{kCachedPrimitives};
};

WeightGradientEntry build_weight_gradient(int64_t n, int64_t m, int64_t k, DType type) {
  using Tag = dnnl::memory::format_tag;
  const auto t = onednn_type(type);
  const auto& engine = onednn_runtime().engine;
  WeightGradientEntry entry;
  entry.src = dnnl::memory::desc({n, k}, t, Tag::ab);
  entry.diff_dst = dnnl::memory::desc({n, m}, t, Tag::ab);
  entry.diff_weights = dnnl::memory::desc({m, k}, dnnl::memory::data_type::f32, Tag::ab);
  // oneDNN builds a backward primitive against the forward one it would pair with.
  const dnnl::inner_product_forward::primitive_desc forward(
      dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training, entry.src,
                                        dnnl::memory::desc({m, k}, t, Tag::ab), entry.diff_dst),
      engine);
  const dnnl::inner_product_backward_weights::primitive_desc pd(
      dnnl::inner_product_backward_weights::desc(entry.src, entry.diff_weights, entry.diff_dst),
      engine, forward);
  entry.primitive = dnnl::inner_product_backward_weights(pd);
  return entry;
}

}  // namespace

bool onednn_transposed_product(const Tensor& a, const Tensor& b, const Tensor& out) {
  HEED_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(0) == b.size(0) && a.dtype() == b.dtype() &&
                 a.is_contiguous() && b.is_contiguous() && out.is_contiguous() &&
                 out.dtype() == DType::f32 && out.size(0) == a.size(1) && out.size(1) == b.size(1),
             "matmul: transposed product of {} {} and {} into {} {}", a.dtype(), a.shape_str(),
             b.shape_str(), out.dtype(), out.shape_str());
  if (a.size(1) >= kMinOutputsForPackedWeightGradient || out.numel() == 0) return false;
  static WeightGradientCache* cache = new WeightGradientCache();
  const PrimitiveKey key{static_cast<int64_t>(a.dtype()), a.size(0), a.size(1), b.size(1)};
  WeightGradientEntry entry;
  {
    std::lock_guard<std::mutex> lock(cache->mutex);
    if (const WeightGradientEntry* found = cache->entries.find(key)) {
      entry = *found;
    } else {
      try {
        entry = cache->entries.insert(
            key, build_weight_gradient(a.size(0), a.size(1), b.size(1), a.dtype()));
      } catch (const dnnl::error& e) {
        fail("matmul: oneDNN could not build a weight gradient for {}^T x {} ({}): {}",
             a.shape_str(), b.shape_str(), a.dtype(), e.what());
      }
    }
  }
  OnednnRuntime& runtime = onednn_runtime();
  ProductTimer timer;
  entry.primitive.execute(
      runtime.stream,
      {{DNNL_ARG_SRC, dnnl::memory(entry.src, runtime.engine, b.raw_data())},
       {DNNL_ARG_DIFF_DST, dnnl::memory(entry.diff_dst, runtime.engine, a.raw_data())},
       {DNNL_ARG_DIFF_WEIGHTS, dnnl::memory(entry.diff_weights, runtime.engine, out.raw_data())}});
  runtime.stream.wait();
  return true;
}

}  // namespace heed
