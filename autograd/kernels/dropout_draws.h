#pragma once
// The random stream that dropout draws from, shared by dropout() and the fused attention
// softmax + dropout so that both drop the same elements for the same generator state.
// Element i of a call that reserved Philox blocks from `offset` takes the i-th 16-bit half of
// the stream: half-word i % 8 of block offset + i / 8 (low half of each 32-bit word first).
// It is kept when that draw is >= round(p * 65536): sixteen bits per element halve the
// Philox work of a 32-bit draw and keep p within 2^-17 of what was asked.
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "autograd/generator.h"

namespace heed {

constexpr int64_t kDropoutDrawsPerBlock = 8;

inline uint64_t dropout_blocks(int64_t elements) {
  return static_cast<uint64_t>((elements + kDropoutDrawsPerBlock - 1) / kDropoutDrawsPerBlock);
}

inline uint32_t dropout_threshold(double p) {
  return static_cast<uint32_t>(std::lround(p * 65536.0));
}

// The draws of elements [first, first + count) into `out`. `count` is at most kMaxDropoutDraws.
constexpr int64_t kMaxDropoutDraws = 4096;
inline void dropout_draws(uint64_t seed, uint64_t offset, int64_t first, int64_t count,
                          uint16_t* out) {
  assert(count >= 0 && count <= kMaxDropoutDraws);
  const int64_t b0 = first / kDropoutDrawsPerBlock;
  const int64_t b1 = (first + count + kDropoutDrawsPerBlock - 1) / kDropoutDrawsPerBlock;
  uint32_t words[4 * (kMaxDropoutDraws / kDropoutDrawsPerBlock + 2)];
  philox4x32_blocks(seed, offset + static_cast<uint64_t>(b0), b1 - b0, words);
  static_assert(std::endian::native == std::endian::little);
  // Half-word k of the words is the low (k even) or high half of word k / 2.
  std::memcpy(out, reinterpret_cast<const uint16_t*>(words) + (first - b0 * kDropoutDrawsPerBlock),
              static_cast<size_t>(count) * sizeof(uint16_t));
}

// keep[i] = draws[i] >= threshold; out[i] = keep[i] ? in[i] * scale : 0, for i < count.
// Two passes over a block that sits in L1: GCC 12 leaves a single loop that mixes 16-bit
// draws, byte flags and floats scalar (-fopt-info-vec: "no vectype"), and each pass alone
// vectorises. Scalar, this loop was most of dropout's time.
template <typename T>
inline void apply_dropout_draws(const uint16_t* __restrict draws, int64_t count, uint32_t threshold,
                                T scale, const T* __restrict in, T* __restrict out,
                                uint8_t* __restrict keep) {
  if (threshold > UINT16_MAX) {  // p within 2^-17 of 1: nothing is kept
    std::memset(keep, 0, static_cast<size_t>(count));
  } else {
    const uint16_t limit = static_cast<uint16_t>(threshold);
    for (int64_t i = 0; i < count; ++i) keep[i] = draws[i] >= limit;
  }
  for (int64_t i = 0; i < count; ++i) out[i] = in[i] * (static_cast<T>(keep[i]) * scale);
}

}  // namespace heed
