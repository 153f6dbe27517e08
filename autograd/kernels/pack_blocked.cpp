#include "autograd/kernels/pack_blocked.h"

#include <algorithm>
#include <cstring>

#include "autograd/error.h"
#include "autograd/kernels/parallel.h"

namespace heed {
namespace {

constexpr int64_t kBlockK = 16;

// One f32 block: rows [k0, k0 + rows) by columns [n0, n0 + cols) of b into `out`, row r
// and column c at out[r * block_n + c].
void pack_block(const uint32_t* b, int64_t stride_k, int64_t stride_n, int64_t k0, int64_t rows,
                int64_t n0, int64_t cols, int64_t block_n, uint32_t* out) {
  if (rows < kBlockK || cols < block_n) std::memset(out, 0, sizeof(uint32_t) * kBlockK * block_n);
  if (stride_n == 1) {
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(out + r * block_n, b + (k0 + r) * stride_k + n0, sizeof(uint32_t) * cols);
    }
  } else {
    // A transposed view: columns are contiguous in b, so read along them.
    for (int64_t c = 0; c < cols; ++c) {
      const uint32_t* src = b + (n0 + c) * stride_n + k0 * stride_k;
      for (int64_t r = 0; r < rows; ++r) out[r * block_n + c] = src[r * stride_k];
    }
  }
}

// One bf16 block: rows 2p and 2p + 1 of column c become the 32-bit word out[p * block_n + c],
// row 2p in its low half (the byte order oneDNN's pairs have on x86).
void pack_block(const uint16_t* b, int64_t stride_k, int64_t stride_n, int64_t k0, int64_t rows,
                int64_t n0, int64_t cols, int64_t block_n, uint32_t* out) {
  if (rows < kBlockK || cols < block_n)
    std::memset(out, 0, sizeof(uint32_t) * kBlockK / 2 * block_n);
  const int64_t pairs = rows / 2;
  if (stride_n == 1) {
    for (int64_t p = 0; p < pairs; ++p) {
      const uint16_t* even = b + (k0 + 2 * p) * stride_k + n0;
      const uint16_t* odd = even + stride_k;
      uint32_t* dst = out + p * block_n;
      for (int64_t c = 0; c < cols; ++c) dst[c] = even[c] | (uint32_t{odd[c]} << 16);
    }
  } else if (stride_k == 1) {
    // A transposed view: a pair is two neighbours in b, one 32-bit load.
    for (int64_t c = 0; c < cols; ++c) {
      const uint16_t* src = b + (n0 + c) * stride_n + k0;
      for (int64_t p = 0; p < pairs; ++p) std::memcpy(out + p * block_n + c, src + 2 * p, 4);
    }
  } else {
    for (int64_t p = 0; p < pairs; ++p) {
      for (int64_t c = 0; c < cols; ++c) {
        const uint16_t* src = b + (k0 + 2 * p) * stride_k + (n0 + c) * stride_n;
        out[p * block_n + c] = src[0] | (uint32_t{src[stride_k]} << 16);
      }
    }
  }
  if (rows % 2 == 1) {  // the last row alone, its pair's high half zero
    const int64_t r = rows - 1;
    for (int64_t c = 0; c < cols; ++c) {
      out[r / 2 * block_n + c] = b[(k0 + r) * stride_k + (n0 + c) * stride_n];
    }
  }
}

template <typename T>
void pack_all(const T* b, int64_t k, int64_t n, int64_t stride_k, int64_t stride_n,
              const BlockedLayout& layout, uint32_t* packed) {
  const int64_t block_n = layout.block_n;
  const int64_t blocks_k = (k + kBlockK - 1) / kBlockK, blocks_n = (n + block_n - 1) / block_n;
  const int64_t block_size = kBlockK * block_n * sizeof(T) / sizeof(uint32_t);  // in words
  parallel_for(blocks_n * blocks_k, block_size, [&](int64_t i) {
    const int64_t bn = i / blocks_k, bk = i % blocks_k;
    const int64_t k0 = bk * kBlockK, n0 = bn * block_n;
    pack_block(b, stride_k, stride_n, k0, std::min(kBlockK, k - k0), n0, std::min(block_n, n - n0),
               block_n, packed + i * block_size);
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
    pack_all(static_cast<const uint32_t*>(b), k, n, stride_k, stride_n, layout,
             static_cast<uint32_t*>(packed));
  } else if (element_size == 2 && layout.pairs) {
    pack_all(static_cast<const uint16_t*>(b), k, n, stride_k, stride_n, layout,
             static_cast<uint32_t*>(packed));
  } else {
    fail("pack_blocked: no layout for {}-byte elements {} row pairs", element_size,
         layout.pairs ? "in" : "without");
  }
}

}  // namespace heed
