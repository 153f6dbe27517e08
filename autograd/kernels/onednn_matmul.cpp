#include "autograd/kernels/onednn_matmul.h"

#include <omp.h>

#include <algorithm>
#include <dnnl.hpp>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "autograd/error.h"
#include "autograd/grad_mode.h"
#include "autograd/kernels/lru_cache.h"
#include "autograd/kernels/pack_blocked.h"
#include "autograd/profile.h"

namespace heed {
namespace {

struct Runtime {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

Runtime& runtime() {
  static Runtime* instance = new Runtime();
  return *instance;
}

// A stream for each of `count` pieces run at once (a stream is not shared between threads),
// made on first need; the calling thread's own, should two threads ever run products at once.
std::vector<dnnl::stream>& piece_streams(int64_t count) {
  thread_local std::vector<dnnl::stream> streams;
  while (static_cast<int64_t>(streams.size()) < count) streams.emplace_back(runtime().engine);
  return streams;
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
      dnnl::matmul::primitive_desc pd(desc, runtime().engine);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return available;
}

namespace {

using Key = std::vector<int64_t>;

struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t v : k) h = (h ^ static_cast<size_t>(v)) * 1099511628211ull;
    return h;
  }
};

// Rows of a from which packing b first pays. Measured on Zen 5 (docs/performance.md): with
// 2,048 or 4,096 rows, the Transformer layers' products ran 4-29% faster with b packed (the
// packing included); with 307 rows (the masked-LM head) 9-29% slower, as the pack is then a
// large part of the work. An op may ask for packing from fewer rows in bf16 (PackedOperands).
constexpr int64_t kMinRowsToPackB = 2048;

// Outputs from which a weight gradient runs as the packed matmul rather than oneDNN's
// inner-product gemm (onednn_transposed_product): below it the gemm was 7-12% faster.
constexpr int64_t kMinOutputsForPackedWeightGradient = 2048;

// A primitive for one exact geometry. Where oneDNN has only its slow reference
// implementation for an operand's strides, the operand is copied to a contiguous layout
// first (the copy is far cheaper than the reference kernel).
struct Entry {
  dnnl::matmul primitive;
  // A piece of a product run on one thread while others run theirs (run_in_pieces): its
  // scratchpad is the caller's, so that pieces never share one.
  bool piece = false;
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

// Primitives kept per cache, as many as oneDNN's own primitive cache keeps by default: a step
// uses a few dozen, and batches grouped by length ask for thousands over a run (~70 KB each).
constexpr size_t kCachedPrimitives = 1024;

struct Cache {
  std::mutex mutex;
  LruCache<Key, Entry, KeyHash> entries{kCachedPrimitives};
  MatmulCacheStats stats;
};

Cache& cache() {
  static Cache* instance = new Cache();
  return *instance;
}

dnnl::memory::data_type onednn_type(DType t) {
  switch (t) {
    case DType::f32:
      return dnnl::memory::data_type::f32;
    case DType::bf16:
      return dnnl::memory::data_type::bf16;
    default:
      fail("matmul: oneDNN path takes f32 or bf16, got {}", t);
  }
}

dnnl::memory::desc describe(const Shape& shape, const Shape& strides, DType t) {
  return dnnl::memory::desc(dnnl::memory::dims(shape.begin(), shape.end()), onednn_type(t),
                            dnnl::memory::dims(strides.begin(), strides.end()));
}

Shape bias_shape(int64_t nd, int64_t n) {
  Shape s(nd, 1);
  s.back() = n;
  return s;
}

// oneDNN rejects strides on size-1 dims that do not match a dense layout in some checks;
// give such dims the stride a dense tensor would have.
Shape normalized_strides(const Tensor& t) {
  Shape s = t.strides();
  const Shape dense = contiguous_strides(t.shape());
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.shape()[d] == 1) s[d] = dense[d];
  }
  return s;
}

dnnl::matmul::primitive_desc describe_product(const dnnl::memory::desc& a_md,
                                              const dnnl::memory::desc& b_md, const Tensor& bias,
                                              const Tensor& out, const Shape& out_strides,
                                              bool piece = false) {
  dnnl::primitive_attr attr;
  if (piece) attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  auto c_md = describe(out.shape(), out_strides, DType::f32);
  dnnl::matmul::desc desc = [&] {
    if (bias.defined()) {
      auto bias_md = describe(bias_shape(out.dim(), out.shape().back()),
                              bias_shape(out.dim(), bias.strides().back()), DType::f32);
      return dnnl::matmul::desc(a_md, b_md, bias_md, c_md);
    }
    return dnnl::matmul::desc(a_md, b_md, c_md);
  }();
  return dnnl::matmul::primitive_desc(desc, attr, runtime().engine);
}

dnnl::matmul build(const Shape& a_shape, const Shape& a_strides, const Shape& b_shape,
                   const Shape& b_strides, const Tensor& bias, const Tensor& out,
                   const Shape& out_strides, DType in_type, bool piece, std::string* impl,
                   dnnl::memory::desc* scratchpad) {
  auto pd = describe_product(describe(a_shape, a_strides, in_type),
                             describe(b_shape, b_strides, in_type), bias, out, out_strides, piece);
  *impl = pd.impl_info_str();
  *scratchpad = pd.scratchpad_desc();
  return dnnl::matmul(pd);
}

// The entry for a product that reads a and b as they are, or copies one that only oneDNN's
// reference kernel would read in place. A `piece` takes its scratchpad from the caller.
Entry build_plain(const Tensor& a, const Shape& a_strides, const Tensor& b, const Shape& b_strides,
                  const Tensor& bias, const Tensor& out, bool piece = false) {
  Entry entry;
  entry.piece = piece;
  std::string impl;
  entry.primitive = build(a.shape(), a_strides, b.shape(), b_strides, bias, out,
                          normalized_strides(out), a.dtype(), piece, &impl, &entry.scratchpad);
  if (impl.find("ref") != std::string::npos &&
      (!a.is_contiguous() || !b.is_contiguous() || !out.is_contiguous())) {
    entry.copy_a = !a.is_contiguous();
    entry.copy_b = !b.is_contiguous();
    entry.copy_out = !out.is_contiguous();
    entry.primitive =
        build(a.shape(), entry.copy_a ? contiguous_strides(a.shape()) : a_strides, b.shape(),
              entry.copy_b ? contiguous_strides(b.shape()) : b_strides, bias, out,
              contiguous_strides(out.shape()), a.dtype(), piece, &impl, &entry.scratchpad);
  }
  const Shape& src_strides = entry.copy_a ? contiguous_strides(a.shape()) : a_strides;
  const Shape& weight_strides = entry.copy_b ? contiguous_strides(b.shape()) : b_strides;
  entry.src = describe(a.shape(), src_strides, a.dtype());
  entry.weights = describe(b.shape(), weight_strides, b.dtype());
  entry.dst = describe(out.shape(),
                       entry.copy_out ? contiguous_strides(out.shape()) : normalized_strides(out),
                       DType::f32);
  if (bias.defined()) {
    entry.bias = describe(bias_shape(out.dim(), out.shape().back()),
                          bias_shape(out.dim(), bias.strides().back()), DType::f32);
  }
  return entry;
}

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
                  const Tensor& bias, const Tensor& out, Entry& entry) {
  const DType type = a.dtype();
  const auto a_md = describe(a.shape(), a_strides, type);
  const auto plain = describe(b.shape(), b_strides, type);
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
  entry.dst = describe(out.shape(), out.strides(), DType::f32);
  if (bias.defined()) {
    entry.bias = describe(bias_shape(2, out.shape().back()), bias_shape(2, bias.strides().back()),
                          DType::f32);
  }
  entry.pack_b = true;
  return true;
}

// The cache key of a product's geometry: operand types, shapes and strides, and whether it
// reads b packed or runs as a piece.
Key geometry_key(bool packed, const Tensor& a, const Shape& a_strides, const Tensor& b,
                 const Shape& b_strides, const Tensor& bias, const Tensor& out,
                 bool piece = false) {
  Key key;
  key.reserve(9 * out.dim() + 6);
  key.push_back(out.dim());
  key.push_back(packed);
  key.push_back(piece);
  key.push_back(static_cast<int64_t>(a.dtype()));
  key.push_back(static_cast<int64_t>(b.dtype()));
  key.push_back(bias.defined() ? bias.strides().back() : -1);
  key.insert(key.end(), a.shape().begin(), a.shape().end());
  key.insert(key.end(), a_strides.begin(), a_strides.end());
  key.insert(key.end(), b.shape().begin(), b.shape().end());
  key.insert(key.end(), b_strides.begin(), b_strides.end());
  key.insert(key.end(), out.shape().begin(), out.shape().end());
  const Shape out_strides = normalized_strides(out);
  key.insert(key.end(), out_strides.begin(), out_strides.end());
  return key;
}

// The cached entry for `key`, built by `build` (which returns an Entry) on first use.
template <typename Build>
Entry cached_entry(const Key& key, const Tensor& a, const Tensor& b, Build&& build) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (const Entry* found = c.entries.find(key)) {
    c.stats.hits++;
    return *found;
  }
  Entry entry;
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
void execute(const Entry& entry, const Tensor& a, const Tensor& b, const Tensor& bias,
             const Tensor& out, dnnl::stream& stream, const Tensor& scratchpad = Tensor()) {
  const auto& engine = runtime().engine;
  auto mem = [&](const Tensor& t, const dnnl::memory::desc& md) {
    return dnnl::memory(md, engine, t.raw_data());
  };
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, mem(a, entry.src)},
      {DNNL_ARG_WEIGHTS, mem(b, entry.weights)},
      {DNNL_ARG_DST, mem(out, entry.dst)},
  };
  if (bias.defined()) args.emplace(DNNL_ARG_BIAS, mem(bias, entry.bias));
  if (scratchpad.defined()) args.emplace(DNNL_ARG_SCRATCHPAD, mem(scratchpad, entry.scratchpad));
  entry.primitive.execute(stream, args);
  stream.wait();
}

void run(const Entry& entry, const Tensor& a, const Tensor& b, const Tensor& bias,
         const Tensor& out) {
  ProductTimer timer;
  execute(entry, a, b, bias, out, runtime().stream);
}

// Out's columns under which a 2-D product stays whole: with 64 columns the pieces ran at
// 0.86-0.95x the speed of oneDNN's own split (docs/performance.md).
constexpr int64_t kMinColumnsForPieces = 128;

// Multiply-adds under which a product stays whole: below, the pieces' own cost (a parallel
// region, a primitive lookup and views per piece: a few microseconds) ate the gain, and the
// encoder-decoder's beam search with the KV cache (bench_decode) took 1.5x as long with pieces
// from 32,768 multiply-adds on (docs/performance.md).
constexpr int64_t kMinMultiplyAddsForPieces = int64_t{1} << 24;

// How many pieces run_in_pieces cuts a product into: one per thread, along out's first dim
// (rows, or the leading batch dim), when there is more than one thread to give them to.
int64_t product_pieces(const Tensor& a, const Tensor& out) {
  const int64_t threads = omp_get_max_threads();
  if (threads < 2 || omp_in_parallel() || out.dim() < 2) return 1;
  if (out.dim() == 2 && out.size(1) < kMinColumnsForPieces) return 1;
  if (out.numel() * a.size(-1) < kMinMultiplyAddsForPieces) return 1;
  return std::min(threads, out.size(0));
}

// A piece: its operands (views into the product's), its primitive and its scratchpad.
struct Piece {
  Tensor a, b, out, scratchpad;
  Entry entry;
};

// Runs a product as one single-threaded oneDNN product per thread, each on its own rows of
// out (a 2-D product) or its own elements of the leading batch dim; false, having run nothing,
// where it stays whole (product_pieces) or a piece's operands would need copying for oneDNN's
// reference kernel (build_plain).
// On Zen 5, oneDNN 2.6 splitting the same product between two threads itself took 8-24%
// longer for 2-D products and 20-47% for batched ones (docs/performance.md). The pieces are cut
// as parallel_for's static schedule cuts rows, so that the rows a thread's next loop reads are
// the ones it wrote.
bool run_in_pieces(const Tensor& a, const Tensor& b, const Tensor& bias, const Tensor& out) {
  const int64_t count = product_pieces(a, out);
  if (count < 2) return false;
  const int64_t lead = out.size(0);
  // Batch dims of a or b may broadcast (size 1): such an operand is whole in every piece.
  const bool split_a = a.size(0) == lead, split_b = out.dim() > 2 && b.size(0) == lead;
  std::vector<Piece> pieces(count);
  {
    NoGradGuard no_grad;  // the views are operands only
    for (int64_t p = 0; p < count; ++p) {
      Piece& piece = pieces[p];
      // As parallel_for's static schedule splits rows: the first lead % count pieces one more.
      const int64_t size = lead / count, extra = lead % count;
      const int64_t start = p * size + std::min(p, extra), end = start + size + (p < extra);
      piece.a = split_a ? a.slice(0, start, end) : a;
      piece.b = split_b ? b.slice(0, start, end) : b;
      piece.out = out.slice(0, start, end);
      const Shape a_strides = normalized_strides(piece.a);
      const Shape b_strides = normalized_strides(piece.b);
      const Key key =
          geometry_key(false, piece.a, a_strides, piece.b, b_strides, bias, piece.out, true);
      piece.entry = cached_entry(key, piece.a, piece.b, [&] {
        return build_plain(piece.a, a_strides, piece.b, b_strides, bias, piece.out, true);
      });
      if (piece.entry.copy_a || piece.entry.copy_b || piece.entry.copy_out) return false;
      if (piece.entry.scratchpad.get_size() > 0) {
        piece.scratchpad =
            Tensor::empty({static_cast<int64_t>(piece.entry.scratchpad.get_size())}, DType::u8);
      }
    }
  }
  std::vector<dnnl::stream>& streams = piece_streams(count);
  std::string error;
  {
    ProductTimer timer;
#pragma omp parallel for num_threads(count) schedule(static)
    for (int64_t p = 0; p < count; ++p) {
      const Piece& piece = pieces[p];
      try {
        execute(piece.entry, piece.a, piece.b, bias, piece.out, streams[p], piece.scratchpad);
      } catch (const std::exception& e) {  // none may leave the parallel region
#pragma omp critical(heed_product_pieces)
        error = e.what();
      }
    }
  }
  if (!error.empty()) {
    fail("matmul: oneDNN failed on a piece of {} x {}: {}", a.shape_str(), b.shape_str(), error);
  }
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.stats.in_pieces++;
  return true;
}

}  // namespace

void onednn_matmul(const Tensor& a, const Tensor& b, const Tensor& bias, const Tensor& out) {
  if (run_in_pieces(a, b, bias, out)) return;
  const Shape a_strides = normalized_strides(a), b_strides = normalized_strides(b);
  const Key key = geometry_key(false, a, a_strides, b, b_strides, bias, out);
  const Entry entry =
      cached_entry(key, a, b, [&] { return build_plain(a, a_strides, b, b_strides, bias, out); });
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
  const Key key = geometry_key(true, a, a_strides, b, b_strides, bias, out);
  const Entry entry = cached_entry(key, a, b, [&] {
    Entry built;
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

namespace {

// A weight-gradient primitive for one geometry, with the descriptors it was built with.
struct WeightGradientEntry {
  dnnl::inner_product_backward_weights primitive;
  dnnl::memory::desc src, diff_dst, diff_weights;
};

struct WeightGradientCache {
  std::mutex mutex;
  LruCache<Key, WeightGradientEntry, KeyHash> entries{kCachedPrimitives};
};

WeightGradientEntry build_weight_gradient(int64_t n, int64_t m, int64_t k, DType type) {
  using Tag = dnnl::memory::format_tag;
  const auto t = onednn_type(type);
  WeightGradientEntry entry;
  entry.src = dnnl::memory::desc({n, k}, t, Tag::ab);
  entry.diff_dst = dnnl::memory::desc({n, m}, t, Tag::ab);
  entry.diff_weights = dnnl::memory::desc({m, k}, dnnl::memory::data_type::f32, Tag::ab);
  // oneDNN builds a backward primitive against the forward one it would pair with.
  const dnnl::inner_product_forward::primitive_desc forward(
      dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training, entry.src,
                                        dnnl::memory::desc({m, k}, t, Tag::ab), entry.diff_dst),
      runtime().engine);
  const dnnl::inner_product_backward_weights::primitive_desc pd(
      dnnl::inner_product_backward_weights::desc(entry.src, entry.diff_weights, entry.diff_dst),
      runtime().engine, forward);
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
  const Key key{static_cast<int64_t>(a.dtype()), a.size(0), a.size(1), b.size(1)};
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
  const auto& engine = runtime().engine;
  ProductTimer timer;
  entry.primitive.execute(
      runtime().stream,
      {{DNNL_ARG_SRC, dnnl::memory(entry.src, engine, b.raw_data())},
       {DNNL_ARG_DIFF_DST, dnnl::memory(entry.diff_dst, engine, a.raw_data())},
       {DNNL_ARG_DIFF_WEIGHTS, dnnl::memory(entry.diff_weights, engine, out.raw_data())}});
  runtime().stream.wait();
  return true;
}

MatmulCacheStats matmul_cache_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  MatmulCacheStats stats = c.stats;
  stats.cached = c.entries.size();
  stats.evicted = c.entries.evictions();
  return stats;
}

}  // namespace heed
