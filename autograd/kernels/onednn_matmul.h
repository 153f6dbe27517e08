#pragma once
// The fast matrix product on oneDNN. All of the library's use of the oneDNN API lives in the
// onednn_*.cpp files beside this one (their shared part: onednn_primitives.h), the places to
// change between oneDNN 2.x (matmul::desc) and 3.x (primitive_desc built directly).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "autograd/tensor.h"

namespace heed {

// out = a . b (+ bias). a [.., M, K] and b [.., K, N] have the same ndim, batch dims equal or
// 1, any strides (transposed views multiply without copies); a and b are both f32 or both
// bf16; bias is f32 [N] or undefined; out is an f32 [.., M, N] with any strides whose last
// dim is unit-stride (a product can write its heads straight into [B, T, h, d] memory).
// With more than one thread, a product with enough work runs as one single-threaded oneDNN
// product per thread, each on its own rows of out (or elements of out's first batch dim).
void onednn_matmul(const Tensor& a, const Tensor& b, const Tensor& bias, const Tensor& out);

// Packed copies of b that one op's products share: an op that runs several products on one
// weight (linear_cross_entropy, a chunk of rows at a time) packs it once per layout rather
// than once per product. A copy is served again only for the same memory, view, layout and
// storage version; each holds its b's storage, so that address cannot come back as another
// tensor's. Hold one for the op's duration only.
class PackedOperands {
 public:
  // bf16_min_rows > 0: products with bf16 a that hold this pack b from that many rows,
  // rather than from onednn_matmul_packed's own bound.
  explicit PackedOperands(int64_t bf16_min_rows = 0) : bf16_min_rows_(bf16_min_rows) {}
  int64_t bf16_min_rows() const { return bf16_min_rows_; }
  // The packed copy of b in `layout` made earlier, or null.
  const Tensor* find(const Tensor& b, int64_t block_n, bool pairs) const;
  // Holds `packed` as b's copy in that layout; returns it.
  const Tensor& keep(const Tensor& b, int64_t block_n, bool pairs, Tensor packed);
  size_t copies() const { return held_.size(); }

 private:
  struct Held {
    std::shared_ptr<Storage> storage;
    const void* data;
    DType dtype;
    int64_t k, n, stride_k, stride_n, block_n;
    bool pairs;
    uint64_t version;
    Tensor packed;
  };
  int64_t bf16_min_rows_;
  std::vector<Held> held_;
};

// The same for a 2-D b that all of a's rows share (a weight), with b first packed into the
// blocked layout oneDNN's kernel reads (kernels/pack_blocked.h); an f32 b with a bf16 a is
// rounded to bf16 as it is packed. Returns false, having run nothing, where that does not pay
// (fewer than 2,048 rows, or than reuse's bf16_min_rows with bf16 a) or this CPU's kernel
// reads b as it is: then call onednn_matmul. With `reuse`, a packed copy of b it holds is read
// instead of packing b again, and a new one is left there.
bool onednn_matmul_packed(const Tensor& a, const Tensor& b, const Tensor& bias, const Tensor& out,
                          PackedOperands* reuse = nullptr);

// out = a^T . b for contiguous 2-D a [N, M] and b [N, K] of one type (f32, or bf16 where this
// CPU has a bf16 matmul) into a contiguous f32 out [M, K]: a Linear's weight gradient, where
// the sum runs over the rows (tokens) of both operands. It runs as oneDNN's inner-product
// weight gradient (a = the output gradient, b = the input), whose gemm reads the operands as
// they are: 7-12% faster on Zen 5 than a matmul that reads a transposed
// (docs/performance_history.md).
// Returns false, having run nothing, from 2,048 columns of a on (out's rows), where a matmul
// with b packed (onednn_matmul_packed) is faster; or when out is empty.
bool onednn_transposed_product(const Tensor& a, const Tensor& b, const Tensor& out);

// Whether this CPU has a oneDNN bf16 matmul (oneDNN 2.6 needs AVX-512 for one; an AVX2-only CPU
// has none). Probed once, by building a tiny bf16 primitive.
bool onednn_bf16_matmul_available();

// The product primitives' cache, which keeps the 1,024 most recently used. A product run in
// pieces looks up (and builds) one primitive per piece shape; these count here too.
struct MatmulCacheStats {
  size_t primitives = 0;  // primitives built (a shape dropped and asked for again builds again)
  size_t packed = 0;      // of them, reading b packed
  size_t hits = 0;
  size_t cached = 0;     // held now
  size_t evicted = 0;    // dropped, least recently used first, to stay at 1,024
  size_t in_pieces = 0;  // products run as one piece per thread (not a cache figure)
};
MatmulCacheStats matmul_cache_stats();

}  // namespace heed
