#pragma once
// Packs a 2-D matrix b [K, N] into the blocked layout oneDNN's brgemm matmul reads its
// weights in: blocks of `block_n` columns (outer) by 16 rows, each block 16 x block_n
// row-major (f32: oneDNN's BA16a<block_n>b), or for bf16 8 row pairs x block_n x 2, the two
// rows of a pair side by side (BA16a<block_n>b2a, the VNNI order). Rows and columns past K and
// N are zero. Given a plain b, the kernel packs it itself inside every call, per thread;
// packed once here, the product runs 4-29% faster when many rows of a share b (see
// docs/performance_history.md).
#include <cstdint>

#include "base/dtype.h"

namespace heed {

struct BlockedLayout {
  int64_t block_n = 64;  // columns per block: 16, 32, 48 or 64
  bool pairs = false;    // bf16: rows interleaved in pairs
};

// Elements the packed copy holds, padding included.
int64_t packed_elements(int64_t k, int64_t n, const BlockedLayout& layout);

// b's element (i, j) is at b[i * stride_k + j * stride_n]; either stride may be 1 (a plain or
// a transposed view). `source` is f32 or bf16; the packed copy is bf16 with `layout.pairs`
// (an f32 b is rounded on the way, as to_bf16 would), f32 without.
void pack_blocked(const void* b, DType source, int64_t k, int64_t n, int64_t stride_k,
                  int64_t stride_n, const BlockedLayout& layout, void* packed);

}  // namespace heed
