#pragma once
// What the oneDNN product files share (onednn_matmul.cpp, onednn_product_pieces.cpp,
// onednn_weight_gradient.cpp), and nothing else includes: the engine and stream, descriptors
// of heed tensors, and the cache of matmul primitives, one per exact geometry. In the library
// these files alone touch the oneDNN API (a benchmark and a test use it too), so they are the
// places to change between oneDNN 2.x (matmul::desc) and 3.x (primitive_desc built directly).
#include <cstdint>
#include <dnnl.hpp>
#include <mutex>
#include <vector>

#include "autograd/kernels/lru_cache.h"
#include "autograd/kernels/onednn_matmul.h"
#include "autograd/kernels/pack_blocked.h"
#include "autograd/tensor.h"
#include "base/error.h"

namespace heed {

struct OnednnRuntime {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

OnednnRuntime& onednn_runtime();

dnnl::memory::data_type onednn_type(DType t);

dnnl::memory::desc describe_memory(const Shape& shape, const Shape& strides, DType t);

// A bias [N] as oneDNN broadcasts it over an nd-dim out: [1, .., 1, N].
Shape bias_shape(int64_t nd, int64_t n);

// oneDNN rejects strides on size-1 dims that do not match a dense layout in some checks;
// give such dims the stride a dense tensor would have.
Shape normalized_strides(const Tensor& t);

using PrimitiveKey = std::vector<int64_t>;

struct PrimitiveKeyHash {
  size_t operator()(const PrimitiveKey& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t v : k) h = (h ^ static_cast<size_t>(v)) * 1099511628211ull;
    return h;
  }
};

// Primitives kept per cache, as many as oneDNN's own primitive cache keeps by default: a step
// uses a few dozen, and batches grouped by length ask for thousands over a run (~70 KB each).
inline constexpr size_t kCachedPrimitives = 1024;

// A matmul primitive for one exact geometry. Where oneDNN has only its slow reference
// implementation for an operand's strides, the operand is copied to a contiguous layout
// first (the copy is far cheaper than the reference kernel).
struct ProductEntry {
  dnnl::matmul primitive;
  // Empty unless the primitive was built for a user scratchpad (a piece: run_in_pieces).
  dnnl::memory::desc scratchpad;
  // copy_out: the product runs into a contiguous temporary that is then copied into out.
  bool copy_a = false, copy_b = false, copy_out = false;
  // The descriptors the primitive was built with, so a call only wraps pointers. With b
  // packed, `weights` is oneDNN's blocked layout.
  dnnl::memory::desc src, weights, dst, bias;
  // onednn_matmul_packed: whether b is packed into `layout` (false: this product reads b as
  // it is, and onednn_matmul runs it).
  bool pack_b = false;
  BlockedLayout layout;
};

struct ProductCache {
  std::mutex mutex;
  LruCache<PrimitiveKey, ProductEntry, PrimitiveKeyHash> entries{kCachedPrimitives};
  MatmulCacheStats stats;
};

ProductCache& product_cache();

// The description of out = a . b (+ bias) over these memory descriptors; a `piece` takes its
// scratchpad from the caller (oneDNN's user scratchpad mode).
dnnl::matmul::primitive_desc describe_product(const dnnl::memory::desc& a_md,
                                              const dnnl::memory::desc& b_md, const Tensor& bias,
                                              const Tensor& out, const Shape& out_strides,
                                              bool piece = false);

// The entry for a product that reads a and b as they are, or copies one that only oneDNN's
// reference kernel would read in place.
ProductEntry build_plain_product(const Tensor& a, const Shape& a_strides, const Tensor& b,
                                 const Shape& b_strides, const Tensor& bias, const Tensor& out,
                                 bool piece = false);

// The cache key of a product's geometry: operand types, shapes and strides, and whether it
// reads b packed or runs as a piece.
PrimitiveKey product_key(bool packed, const Tensor& a, const Shape& a_strides, const Tensor& b,
                         const Shape& b_strides, const Tensor& bias, const Tensor& out,
                         bool piece = false);

// The cached entry for `key`, built by `build` (which returns a ProductEntry) on first use.
// A template rather than a std::function, whose captures would be allocated on every call.
template <typename Build>
ProductEntry cached_product(const PrimitiveKey& key, const Tensor& a, const Tensor& b,
                            Build&& build) {
  ProductCache& c = product_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (const ProductEntry* found = c.entries.find(key)) {
    c.stats.hits++;
    return *found;
  }
  ProductEntry entry;
  try {
    entry = build();
  } catch (const dnnl::error& e) {
    fail("matmul: oneDNN could not build a primitive for {} x {} ({}): {}", a.shape_str(),
         b.shape_str(), a.dtype(), e.what());
  }
  c.entries.insert(key, entry);
  if (entry.primitive) c.stats.primitives++;  // not when it found b cannot be packed
  if (entry.pack_b) c.stats.packed++;
  return entry;
}

// Runs entry's primitive on `stream` (untimed); a piece's scratchpad is `scratchpad`.
void execute_product(const ProductEntry& entry, const Tensor& a, const Tensor& b,
                     const Tensor& bias, const Tensor& out, dnnl::stream& stream,
                     const Tensor& scratchpad = Tensor());

// Runs a product as one single-threaded oneDNN product per thread
// (onednn_product_pieces.cpp); false, having run nothing, where it stays whole.
bool run_in_pieces(const Tensor& a, const Tensor& b, const Tensor& bias, const Tensor& out);

}  // namespace heed
