#include "autograd/kernels/pack_blocked.h"

#include <algorithm>
#include <cstring>

#include "autograd/error.h"
#include "autograd/kernels/parallel.h"

namespace heed {
namespace {

constexpr int64_t kBlockK = 16;

// One block: rows [k0, k0 + rows) by columns [n0, n0 + cols) of b into `out`, whose row r,
// column c sits at out[(r / pair) * block_n * pair + c * pair + r % pair].
template <typename T, int64_t pair>
void pack_block(const T* b, int64_t stride_k, int64_t stride_n, int64_t k0, int64_t rows,
                int64_t n0, int64_t cols, int64_t block_n, T* out) {
  if (rows < kBlockK || cols < block_n) std::memset(out, 0, sizeof(T) * kBlockK * block_n);
  if (stride_n == 1) {
    // Rows are contiguous in b: copy (or interleave) row by row.
    for (int64_t r = 0; r < rows; ++r) {
      const T* src = b + (k0 + r) * stride_k + n0;
      T* dst = out + (r / pair) * block_n * pair + r % pair;
      if constexpr (pair == 1) {
        std::memcpy(dst, src, sizeof(T) * cols);
      } else {
        for (int64_t c = 0; c < cols; ++c) dst[c * pair] = src[c];
      }
    }
  } else {
    // A transposed view: columns are contiguous in b, so read along them.
    for (int64_t c = 0; c < cols; ++c) {
      const T* src = b + (n0 + c) * stride_n + k0 * stride_k;
      for (int64_t r = 0; r < rows; ++r) {
        out[(r / pair) * block_n * pair + c * pair + r % pair] = src[r * stride_k];
      }
    }
  }
}

template <typename T, int64_t pair>
void pack_all(const T* b, int64_t k, int64_t n, int64_t stride_k, int64_t stride_n,
              const BlockedLayout& layout, T* packed) {
  const int64_t block_n = layout.block_n;
  const int64_t blocks_k = (k + kBlockK - 1) / kBlockK, blocks_n = (n + block_n - 1) / block_n;
  const int64_t block_size = kBlockK * block_n;
  parallel_for(blocks_n * blocks_k, block_size, [&](int64_t i) {
    const int64_t bn = i / blocks_k, bk = i % blocks_k;
    const int64_t k0 = bk * kBlockK, n0 = bn * block_n;
    pack_block<T, pair>(b, stride_k, stride_n, k0, std::min(kBlockK, k - k0), n0,
                        std::min(block_n, n - n0), block_n, packed + i * block_size);
  });
}

}  // namespace

int64_t packed_elements(int64_t k, int64_t n, const BlockedLayout& layout) {
  return (k + kBlockK - 1) / kBlockK * kBlockK * ((n + layout.block_n - 1) / layout.block_n) *
         layout.block_n;
}

void pack_blocked(const void* b, int64_t k, int64_t n, int64_t stride_k, int64_t stride_n,
                  int element_size, const BlockedLayout& layout, void* packed) {
  if (element_size == 4 && !layout.pairs) {
    pack_all<uint32_t, 1>(static_cast<const uint32_t*>(b), k, n, stride_k, stride_n, layout,
                          static_cast<uint32_t*>(packed));
  } else if (element_size == 2 && layout.pairs) {
    pack_all<uint16_t, 2>(static_cast<const uint16_t*>(b), k, n, stride_k, stride_n, layout,
                          static_cast<uint16_t*>(packed));
  } else {
    fail("pack_blocked: no layout for {}-byte elements {} row pairs", element_size,
         layout.pairs ? "in" : "without");
  }
}

}  // namespace heed
