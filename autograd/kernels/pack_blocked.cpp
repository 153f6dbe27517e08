#include "autograd/kernels/pack_blocked.h"

#include <algorithm>
#include <cstring>

#include "autograd/kernels/parallel.h"
#include "base/error.h"

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

// The bf16 bits of a source element.
inline uint32_t bits(uint16_t x) {
  return x;
}
inline uint32_t bits(float x) {
  return bf16_bits_of(x);
}

// One bf16 block from an f32 or bf16 b: rows 2p and 2p + 1 of column c become the 32-bit word
// out[p * block_n + c], row 2p in its low half (the byte order oneDNN's pairs have on x86).
template <typename S>
void pack_pairs_block(const S* b, int64_t stride_k, int64_t stride_n, int64_t k0, int64_t rows,
                      int64_t n0, int64_t cols, int64_t block_n, uint32_t* out) {
  if (rows < kBlockK || cols < block_n) {
    std::memset(out, 0, sizeof(uint32_t) * kBlockK / 2 * block_n);
  }
  const int64_t pairs = rows / 2;
  if (stride_n == 1) {
    for (int64_t p = 0; p < pairs; ++p) {
      const S* even = b + (k0 + 2 * p) * stride_k + n0;
      const S* odd = even + stride_k;
      uint32_t* dst = out + p * block_n;
      for (int64_t c = 0; c < cols; ++c) dst[c] = bits(even[c]) | (bits(odd[c]) << 16);
    }
  } else {
    // A transposed view: columns are contiguous in b, so read along them.
    for (int64_t c = 0; c < cols; ++c) {
      const S* src = b + (n0 + c) * stride_n + k0 * stride_k;
      for (int64_t p = 0; p < pairs; ++p) {
        out[p * block_n + c] =
            bits(src[2 * p * stride_k]) | (bits(src[(2 * p + 1) * stride_k]) << 16);
      }
    }
  }
  if (rows % 2 == 1) {  // the last row alone, its pair's high half zero
    const int64_t r = rows - 1;
    for (int64_t c = 0; c < cols; ++c) {
      out[r / 2 * block_n + c] = bits(b[(k0 + r) * stride_k + (n0 + c) * stride_n]);
    }
  }
}

// Every block of b, in parallel; `words_per_block` 32-bit words each.
template <typename Block>
void pack_all(int64_t k, int64_t n, const BlockedLayout& layout, uint32_t* packed,
              Block&& pack_block_at) {
  const int64_t block_n = layout.block_n;
  const int64_t blocks_k = (k + kBlockK - 1) / kBlockK, blocks_n = (n + block_n - 1) / block_n;
  const int64_t words_per_block = kBlockK * block_n / (layout.pairs ? 2 : 1);
  parallel_for(blocks_n * blocks_k, words_per_block, [&](int64_t i) {
    const int64_t bn = i / blocks_k, bk = i % blocks_k;
    const int64_t k0 = bk * kBlockK, n0 = bn * block_n;
    pack_block_at(k0, std::min(kBlockK, k - k0), n0, std::min(block_n, n - n0),
                  packed + i * words_per_block);
  });
}

}  // namespace

int64_t packed_elements(int64_t k, int64_t n, const BlockedLayout& layout) {
  return (k + kBlockK - 1) / kBlockK * kBlockK * ((n + layout.block_n - 1) / layout.block_n) *
         layout.block_n;
}

void pack_blocked(const void* b, DType source, int64_t k, int64_t n, int64_t stride_k,
                  int64_t stride_n, const BlockedLayout& layout, void* packed) {
  uint32_t* out = static_cast<uint32_t*>(packed);
  const int64_t block_n = layout.block_n;
  if (!layout.pairs && source == DType::f32) {
    const auto* src = static_cast<const uint32_t*>(b);
    pack_all(k, n, layout, out,
             [&](int64_t k0, int64_t rows, int64_t n0, int64_t cols, uint32_t* at) {
               pack_block(src, stride_k, stride_n, k0, rows, n0, cols, block_n, at);
             });
  } else if (layout.pairs && source == DType::f32) {
    const auto* src = static_cast<const float*>(b);
    pack_all(k, n, layout, out,
             [&](int64_t k0, int64_t rows, int64_t n0, int64_t cols, uint32_t* at) {
               pack_pairs_block(src, stride_k, stride_n, k0, rows, n0, cols, block_n, at);
             });
  } else if (layout.pairs && source == DType::bf16) {
    const auto* src = static_cast<const uint16_t*>(b);
    pack_all(k, n, layout, out,
             [&](int64_t k0, int64_t rows, int64_t n0, int64_t cols, uint32_t* at) {
               pack_pairs_block(src, stride_k, stride_n, k0, rows, n0, cols, block_n, at);
             });
  } else {
    fail("pack_blocked: cannot pack {} {} row pairs", source, layout.pairs ? "in" : "without");
  }
}

}  // namespace heed
