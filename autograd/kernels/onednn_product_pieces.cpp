// A product run as one single-threaded oneDNN product per thread, each on its own rows of out
// (a 2-D product) or its own elements of the leading batch dim. On Zen 5, oneDNN 2.6 splitting
// the same product between two threads itself took 8-24% longer for 2-D products and 20-47%
// for batched ones (docs/performance_history.md). Inside our parallel region oneDNN runs each
// piece on the calling thread alone: its parallel() calls f(0, 1) when nested.
#include <omp.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/kernels/onednn_primitives.h"
#include "base/profile.h"

namespace heed {
namespace {

// Out's columns under which a 2-D product stays whole: with 64 columns the pieces ran at
// 0.86-0.95x the speed of oneDNN's own split (docs/performance_history.md).
constexpr int64_t kMinColumnsForPieces = 128;

// Multiply-adds under which a product stays whole: below, the pieces' own cost (a parallel
// region, a primitive lookup and views per piece: a few microseconds) ate the gain, and the
// encoder-decoder's beam search with the KV cache (bench_decode) took 1.5x as long with pieces
// from 32,768 multiply-adds on (docs/performance_history.md).
constexpr int64_t kMinMultiplyAddsForPieces = int64_t{1} << 24;

// How many pieces a product is cut into: one per thread, along out's first dim (rows, or the
// leading batch dim), when there is more than one thread to give them to.
int64_t product_pieces(const Tensor& a, const Tensor& out) {
  const int64_t threads = omp_get_max_threads();
  if (threads < 2 || omp_in_parallel() || out.dim() < 2) return 1;
  if (out.dim() == 2 && out.size(1) < kMinColumnsForPieces) return 1;
  if (out.numel() * a.size(-1) < kMinMultiplyAddsForPieces) return 1;
  return std::min(threads, out.size(0));
}

// A stream for each of `count` pieces run at once (a stream is not shared between threads),
// made on first need; the calling thread's own, should two threads ever run products at once.
std::vector<dnnl::stream>& piece_streams(int64_t count) {
  thread_local std::vector<dnnl::stream> streams;
  while (static_cast<int64_t>(streams.size()) < count) {
    streams.emplace_back(onednn_runtime().engine);
  }
  return streams;
}

// A piece: its operands (views into the product's), its primitive and its scratchpad.
struct Piece {
  Tensor a, b, out, scratchpad;
  ProductEntry entry;
};

}  // namespace

// False, having run nothing, where the product stays whole (product_pieces) or a piece's
// operands would need copying for oneDNN's reference kernel (build_plain_product). The pieces
// are cut as parallel_for's static schedule cuts rows, so that the rows a thread's next loop
// reads are the ones it wrote.
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
      const PrimitiveKey key =
          product_key(false, piece.a, a_strides, piece.b, b_strides, bias, piece.out, true);
      piece.entry = cached_product(key, piece.a, piece.b, [&] {
        return build_plain_product(piece.a, a_strides, piece.b, b_strides, bias, piece.out, true);
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
        execute_product(piece.entry, piece.a, piece.b, bias, piece.out, streams[p],
                        piece.scratchpad);
      } catch (const std::exception& e) {  // none may leave the parallel region
#pragma omp critical(heed_product_pieces)
        error = e.what();
      }
    }
  }
  if (!error.empty()) {
    fail("matmul: oneDNN failed on a piece of {} x {}: {}", a.shape_str(), b.shape_str(), error);
  }
  ProductCache& c = product_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.stats.in_pieces++;
  return true;
}

}  // namespace heed
