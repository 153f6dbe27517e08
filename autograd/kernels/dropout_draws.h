#pragma once
// The random stream that dropout draws from, shared by dropout() and the fused attention
// softmax + dropout so that both drop the same elements for the same generator state.
// Element i of a call that reserved Philox blocks from `offset` takes the i-th 16-bit half of
// the stream: half-word i % 8 of block offset + i / 8 (low half of each 32-bit word first).
// It is kept when that draw is >= round(p * 65536): sixteen bits per element halve the
// Philox work of a 32-bit draw and keep p within 2^-17 of what was asked.
#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "autograd/generator.h"
#include "autograd/kernels/wide_loops.h"

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

// Keep masks hold one bit per element: element i is bit i % 8 of byte i / 8 of its block
// (a whole tensor for dropout(), a row for attention), an eighth of a byte mask's memory.
// Every block of elements a thread writes starts on a byte, so no byte is shared.
inline int64_t keep_mask_bytes(int64_t elements) {
  return (elements + 7) / 8;
}

// Flag bytes (0 or 1) to bits and back, eight at a time: the multiply gathers byte j's low
// bit into bit 56 + j (the partial products never collide or carry into the top byte, as
// checked for all 256 inputs), and a table spreads a byte back into eight flags.
inline void pack_flags(uint8_t* flags, int64_t count, uint8_t* __restrict bits) {
  std::memset(flags + count, 0, static_cast<size_t>(keep_mask_bytes(count) * 8 - count));
  for (int64_t b = 0; b < keep_mask_bytes(count); ++b) {
    uint64_t eight;
    std::memcpy(&eight, flags + 8 * b, 8);
    bits[b] = static_cast<uint8_t>((eight * 0x0102040810204080ULL) >> 56);
  }
}
inline constexpr auto kFlagsOfByte = [] {
  std::array<uint64_t, 256> table{};
  for (uint64_t v = 0; v < 256; ++v) {
    for (int j = 0; j < 8; ++j) table[v] |= ((v >> j) & 1) << (8 * j);
  }
  return table;
}();

// keep bit i = draws[i] >= threshold; out[i] = kept ? in[i] * scale : 0, for i < count
// (count <= kMaxDropoutDraws). The flags go through a byte buffer in L1: GCC 12 leaves a
// single loop that mixes 16-bit draws, flags and floats scalar (-fopt-info-vec: "no
// vectype"), while each pass alone vectorises.
template <typename T>
[[gnu::always_inline]] inline void apply_dropout_draws_loop(const uint16_t* __restrict draws,
                                                            int64_t count, uint32_t threshold,
                                                            T scale, const T* __restrict in,
                                                            T* __restrict out,
                                                            uint8_t* __restrict keep_bits) {
  assert(count <= kMaxDropoutDraws);
  uint8_t keep[kMaxDropoutDraws + 8];
  if (threshold > UINT16_MAX) {  // p within 2^-17 of 1: nothing is kept
    std::memset(keep, 0, static_cast<size_t>(count));
  } else {
    const uint16_t limit = static_cast<uint16_t>(threshold);
    for (int64_t i = 0; i < count; ++i) keep[i] = draws[i] >= limit;
  }
  for (int64_t i = 0; i < count; ++i) out[i] = in[i] * (static_cast<T>(keep[i]) * scale);
  pack_flags(keep, count, keep_bits);
}

// out[i] = g[i] * scale where bit i of keep_bits is set, else 0, for i < count; out may be g.
template <typename T>
[[gnu::always_inline]] inline void apply_keep_bits_loop(const uint8_t* keep_bits, int64_t count,
                                                        T scale, const T* g, T* out) {
  uint8_t keep[kMaxDropoutDraws + 8];
  for (int64_t c0 = 0; c0 < count; c0 += kMaxDropoutDraws) {
    const int64_t n = std::min(count - c0, kMaxDropoutDraws);
    const uint8_t* bits = keep_bits + c0 / 8;
    for (int64_t b = 0; b < keep_mask_bytes(n); ++b) {
      std::memcpy(keep + 8 * b, &kFlagsOfByte[bits[b]], 8);
    }
    for (int64_t i = 0; i < n; ++i) out[c0 + i] = g[c0 + i] * (static_cast<T>(keep[i]) * scale);
  }
}

// The same two loops; f32 runs the AVX-512 build of them where the CPU has one
// (kernels/wide_loops.h).
template <typename T>
inline void apply_dropout_draws(const uint16_t* draws, int64_t count, uint32_t threshold, T scale,
                                const T* in, T* out, uint8_t* keep_bits) {
  if constexpr (std::is_same_v<T, float>) {
    wide::apply_dropout_draws(draws, count, threshold, scale, in, out, keep_bits);
  } else {
    apply_dropout_draws_loop<T>(draws, count, threshold, scale, in, out, keep_bits);
  }
}
template <typename T>
inline void apply_keep_bits(const uint8_t* keep_bits, int64_t count, T scale, const T* g, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    wide::apply_keep_bits(keep_bits, count, scale, g, out);
  } else {
    apply_keep_bits_loop<T>(keep_bits, count, scale, g, out);
  }
}

}  // namespace heed
