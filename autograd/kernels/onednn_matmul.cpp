#include "autograd/kernels/onednn_matmul.h"

#include <mutex>
#include <string>
#include <utility>

#include "autograd/kernels/onednn_primitives.h"
#include "autograd/kernels/pack_blocked.h"
#include "base/profile.h"

namespace heed {
namespace {

// Rows of a from which packing b first pays. Measured on Zen 5 (docs/performance_history.md): with
// 2,048 or 4,096 rows, the Transformer layers' products ran 4-29% faster with b packed (the
// packing included); with 307 rows (the masked-LM head) 9-29% slower, as the pack is then a
// large part of the work. An op may ask for packing from fewer rows in bf16 (PackedOperands).
constexpr int64_t kMinRowsToPackB = 2048;

// The blocked layout `chosen` is, if pack_blocked writes it; `type` is the product's.
bool own_layout(const dnnl::memory::desc& chosen, const Tensor& b, DType type,
                BlockedLayout* layout) {
  using Tag = dnnl::memory::format_tag;
  const bool pairs = type == DType::bf16;
  const std::pair<int64_t, Tag> candidates[] = {
      {64, pairs ? Tag::BA16a64b2a : Tag::BA16a64b},
      {48, pairs ? Tag::BA16a48b2a : Tag::BA16a48b},
      {32, pairs ? Tag::BA16a32b2a : Tag::BA16a32b},
      {16, pairs ? Tag::BA16a16b2a : Tag::BA16a16b},
  };
  const dnnl::memory::dims dims{b.size(0), b.size(1)};
  for (const auto& [block_n, tag] : candidates) {
    const BlockedLayout candidate{block_n, pairs};
    const size_t bytes = packed_elements(b.size(0), b.size(1), candidate) * dtype_size(type);
    if (chosen == dnnl::memory::desc(dims, onednn_type(type), tag) && chosen.get_size() == bytes) {
      *layout = candidate;
      return true;
    }
  }
  return false;
}

// Builds `entry` for a 2-D product of a's type that reads b from the layout oneDNN prefers;
// false when that is b's own layout, one pack_blocked does not write (no oneDNN 2.6 kernel on
// AVX-512 or AVX2 picks another), or one only the reference kernel takes.
bool build_packed(const Tensor& a, const Shape& a_strides, const Tensor& b, const Shape& b_strides,
                  const Tensor& bias, const Tensor& out, ProductEntry& entry) {
  const DType type = a.dtype();
  const auto a_md = describe_memory(a.shape(), a_strides, type);
  const auto plain = describe_memory(b.shape(), b_strides, type);
  const dnnl::memory::desc any(dnnl::memory::dims{b.size(0), b.size(1)}, onednn_type(type),
                               dnnl::memory::format_tag::any);
  auto pd = describe_product(a_md, any, bias, out, out.strides());
  if (std::string(pd.impl_info_str()).find("ref") != std::string::npos ||
      pd.weights_desc() == plain || !own_layout(pd.weights_desc(), b, type, &entry.layout)) {
    return false;
  }
  entry.primitive = dnnl::matmul(pd);
  entry.src = a_md;
  entry.weights = pd.weights_desc();
  entry.dst = describe_memory(out.shape(), out.strides(), DType::f32);
  if (bias.defined()) {
    entry.bias = describe_memory(bias_shape(2, out.shape().back()),
                                 bias_shape(2, bias.strides().back()), DType::f32);
  }
  entry.pack_b = true;
  return true;
}

// Runs a whole product on the shared stream, timed as product time.
void run(const ProductEntry& entry, const Tensor& a, const Tensor& b, const Tensor& bias,
         const Tensor& out) {
  ProductTimer timer;
  execute_product(entry, a, b, bias, out, onednn_runtime().stream);
}

}  // namespace

bool onednn_bf16_matmul_available() {
  static const bool available = [] {
    try {
      const dnnl::memory::dims dims{2, 2};
      auto md = [&](dnnl::memory::data_type t) {
        return dnnl::memory::desc(dims, t, dnnl::memory::format_tag::ab);
      };
      dnnl::matmul::desc desc(md(dnnl::memory::data_type::bf16), md(dnnl::memory::data_type::bf16),
                              md(dnnl::memory::data_type::f32));
      dnnl::matmul::primitive_desc pd(desc, onednn_runtime().engine);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return available;
}

void onednn_matmul(const Tensor& a, const Tensor& b, const Tensor& bias, const Tensor& out) {
  if (run_in_pieces(a, b, bias, out)) return;
  const Shape a_strides = normalized_strides(a), b_strides = normalized_strides(b);
  const PrimitiveKey key = product_key(false, a, a_strides, b, b_strides, bias, out);
  const ProductEntry entry = cached_product(
      key, a, b, [&] { return build_plain_product(a, a_strides, b, b_strides, bias, out); });
  const Tensor into = entry.copy_out ? Tensor::empty(out.shape(), out.dtype()) : out;
  run(entry, entry.copy_a ? a.contiguous() : a, entry.copy_b ? b.contiguous() : b, bias, into);
  if (entry.copy_out) Tensor(out).copy_(into);  // a handle to out's memory
}

const Tensor* PackedOperands::find(const Tensor& b, int64_t block_n, bool pairs) const {
  for (const Held& h : held_) {
    if (h.storage == b.storage() && h.data == b.raw_data() && h.dtype == b.dtype() &&
        h.k == b.size(0) && h.n == b.size(1) && h.stride_k == b.stride(0) &&
        h.stride_n == b.stride(1) && h.block_n == block_n && h.pairs == pairs &&
        h.version == b.version()) {
      return &h.packed;
    }
  }
  return nullptr;
}

const Tensor& PackedOperands::keep(const Tensor& b, int64_t block_n, bool pairs, Tensor packed) {
  held_.push_back(Held{b.storage(), b.raw_data(), b.dtype(), b.size(0), b.size(1), b.stride(0),
                       b.stride(1), block_n, pairs, b.version(), std::move(packed)});
  return held_.back().packed;
}

bool onednn_matmul_packed(const Tensor& a, const Tensor& b, const Tensor& bias, const Tensor& out,
                          PackedOperands* reuse) {
  const int64_t min_rows = a.dtype() == DType::bf16 && reuse && reuse->bf16_min_rows() > 0
                               ? reuse->bf16_min_rows()
                               : kMinRowsToPackB;
  if (out.dim() != 2 || a.size(0) < min_rows) return false;
  const Shape a_strides = normalized_strides(a), b_strides = normalized_strides(b);
  const PrimitiveKey key = product_key(true, a, a_strides, b, b_strides, bias, out);
  const ProductEntry entry = cached_product(key, a, b, [&] {
    ProductEntry built;
    build_packed(a, a_strides, b, b_strides, bias, out, built);
    return built;
  });
  if (!entry.pack_b) return false;
  const BlockedLayout& layout = entry.layout;
  const Tensor* packed = reuse ? reuse->find(b, layout.block_n, layout.pairs) : nullptr;
  Tensor packed_here;
  if (packed == nullptr) {
    packed_here =
        Tensor::empty({static_cast<int64_t>((entry.weights.get_size() + 3) / 4)}, DType::f32);
    pack_blocked(b.raw_data(), b.dtype(), b.size(0), b.size(1), b.stride(0), b.stride(1), layout,
                 packed_here.raw_data());
    packed = reuse ? &reuse->keep(b, layout.block_n, layout.pairs, packed_here) : &packed_here;
  }
  run(entry, a, *packed, bias, out);
  return true;
}

MatmulCacheStats matmul_cache_stats() {
  ProductCache& c = product_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  MatmulCacheStats stats = c.stats;
  stats.cached = c.entries.size();
  stats.evicted = c.entries.evictions();
  return stats;
}

}  // namespace heed
