// philox4x32_blocks: the Philox stream of many consecutive counters, sixteen (AVX-512) or
// eight (AVX2) at a time in vector registers, one counter per 32-bit lane. Dropout draws from
// it (kernels/dropout_draws.h); GCC's vectorisation of the one-counter loop kept the four
// words of a counter together and spent most of its instructions shuffling them.
#include "autograd/kernels/philox_blocks.h"

// GCC 12's AVX-512 shift and multiply intrinsics start from _mm512_undefined_epi32(), which
// -Wmaybe-uninitialized mistakes for a read of an uninitialised value (a false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "autograd/generator.h"

namespace heed {

namespace {

// The 32 x 32 -> 64 products of every lane with m, as (high words, low words). vpmuludq
// multiplies the even lanes; the odd lanes are shifted down to multiply them too.
[[gnu::target("avx512f")]] inline void wide_multiply(__m512i c, uint32_t m, __m512i& hi,
                                                     __m512i& lo) {
  const __m512i mul = _mm512_set1_epi32(static_cast<int>(m));
  const __m512i even = _mm512_mul_epu32(c, mul);
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(c, 32), mul);
  hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
  lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
}

[[gnu::target("avx2")]] inline void wide_multiply(__m256i c, uint32_t m, __m256i& hi, __m256i& lo) {
  const __m256i mul = _mm256_set1_epi32(static_cast<int>(m));
  const __m256i even = _mm256_mul_epu32(c, mul);
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(c, 32), mul);
  hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
  lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

// Philox's ten rounds on sixteen (eight) counters, a word of each per register.
[[gnu::target("avx512f")]] inline void philox_rounds(__m512i& c0, __m512i& c1, __m512i& c2,
                                                     __m512i& c3, uint64_t seed) {
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round, k0 += kPhiloxWeyl0, k1 += kPhiloxWeyl1) {
    __m512i hi0, lo0, hi1, lo1;
    wide_multiply(c0, kPhiloxMul0, hi0, lo0);
    wide_multiply(c2, kPhiloxMul1, hi1, lo1);
    // 0x96 is the three-way xor.
    c0 = _mm512_ternarylogic_epi32(hi1, c1, _mm512_set1_epi32(static_cast<int>(k0)), 0x96);
    c2 = _mm512_ternarylogic_epi32(hi0, c3, _mm512_set1_epi32(static_cast<int>(k1)), 0x96);
    c1 = lo1;
    c3 = lo0;
  }
}

[[gnu::target("avx2")]] inline void philox_rounds(__m256i& c0, __m256i& c1, __m256i& c2,
                                                  __m256i& c3, uint64_t seed) {
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round, k0 += kPhiloxWeyl0, k1 += kPhiloxWeyl1) {
    __m256i hi0, lo0, hi1, lo1;
    wide_multiply(c0, kPhiloxMul0, hi0, lo0);
    wide_multiply(c2, kPhiloxMul1, hi1, lo1);
    c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32(static_cast<int>(k0)));
    c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32(static_cast<int>(k1)));
    c1 = lo1;
    c3 = lo0;
  }
}

void one_at_a_time(uint64_t seed, uint64_t counter, int64_t blocks, uint32_t* out) {
  for (int64_t i = 0; i < blocks; ++i) {
    const auto words = philox4x32(seed, counter + static_cast<uint64_t>(i));
    for (int j = 0; j < 4; ++j) out[4 * i + j] = words[j];
  }
}

}  // namespace

[[gnu::target("avx512f")]] void philox4x32_blocks_avx512(uint64_t seed, uint64_t counter,
                                                         int64_t blocks, uint32_t* out) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  int64_t i = 0;
  for (; i + 16 <= blocks; i += 16) {
    const uint64_t first = counter + static_cast<uint64_t>(i);
    const __m512i first_low = _mm512_set1_epi32(static_cast<int>(first));
    // The counter's low word, and its high word plus the carry where the low word wrapped.
    __m512i c0 = _mm512_add_epi32(first_low, lane);
    __m512i c1 = _mm512_set1_epi32(static_cast<int>(first >> 32));
    c1 =
        _mm512_mask_add_epi32(c1, _mm512_cmplt_epu32_mask(c0, first_low), c1, _mm512_set1_epi32(1));
    __m512i c2 = _mm512_setzero_si512(), c3 = _mm512_setzero_si512();
    philox_rounds(c0, c1, c2, c3, seed);
    // Lanes to blocks: a 4 x 16 transpose, so that out holds counter after counter.
    const __m512i t0 = _mm512_unpacklo_epi32(c0, c1), t1 = _mm512_unpackhi_epi32(c0, c1);
    const __m512i t2 = _mm512_unpacklo_epi32(c2, c3), t3 = _mm512_unpackhi_epi32(c2, c3);
    // u_k holds counter 4l + k of the sixteen in its 128-bit lane l.
    const __m512i u0 = _mm512_unpacklo_epi64(t0, t2), u1 = _mm512_unpackhi_epi64(t0, t2);
    const __m512i u2 = _mm512_unpacklo_epi64(t1, t3), u3 = _mm512_unpackhi_epi64(t1, t3);
    const __m512i v0 = _mm512_shuffle_i32x4(u0, u1, 0x44), v1 = _mm512_shuffle_i32x4(u0, u1, 0xEE);
    const __m512i v2 = _mm512_shuffle_i32x4(u2, u3, 0x44), v3 = _mm512_shuffle_i32x4(u2, u3, 0xEE);
    uint32_t* o = out + 4 * i;
    _mm512_storeu_si512(o, _mm512_shuffle_i32x4(v0, v2, 0x88));
    _mm512_storeu_si512(o + 16, _mm512_shuffle_i32x4(v0, v2, 0xDD));
    _mm512_storeu_si512(o + 32, _mm512_shuffle_i32x4(v1, v3, 0x88));
    _mm512_storeu_si512(o + 48, _mm512_shuffle_i32x4(v1, v3, 0xDD));
  }
  one_at_a_time(seed, counter + static_cast<uint64_t>(i), blocks - i, out + 4 * i);
}

[[gnu::target("avx2")]] void philox4x32_blocks_avx2(uint64_t seed, uint64_t counter, int64_t blocks,
                                                    uint32_t* out) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  // Unsigned a < b as signed compares after flipping the sign bits.
  const __m256i sign = _mm256_set1_epi32(INT32_MIN);
  int64_t i = 0;
  for (; i + 8 <= blocks; i += 8) {
    const uint64_t first = counter + static_cast<uint64_t>(i);
    const __m256i first_low = _mm256_set1_epi32(static_cast<int>(first));
    __m256i c0 = _mm256_add_epi32(first_low, lane);
    const __m256i wrapped = _mm256_cmpgt_epi32(_mm256_xor_si256(first_low, sign),
                                               _mm256_xor_si256(c0, sign));  // all ones: carry
    __m256i c1 = _mm256_sub_epi32(_mm256_set1_epi32(static_cast<int>(first >> 32)), wrapped);
    __m256i c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
    philox_rounds(c0, c1, c2, c3, seed);
    const __m256i t0 = _mm256_unpacklo_epi32(c0, c1), t1 = _mm256_unpackhi_epi32(c0, c1);
    const __m256i t2 = _mm256_unpacklo_epi32(c2, c3), t3 = _mm256_unpackhi_epi32(c2, c3);
    // u_k holds counter 4l + k of the eight in its 128-bit lane l.
    const __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    const __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    __m256i* o = reinterpret_cast<__m256i*>(out + 4 * i);
    _mm256_storeu_si256(o, _mm256_permute2x128_si256(u0, u1, 0x20));
    _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(u2, u3, 0x20));
    _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(u0, u1, 0x31));
    _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(u2, u3, 0x31));
  }
  one_at_a_time(seed, counter + static_cast<uint64_t>(i), blocks - i, out + 4 * i);
}

void philox4x32_blocks(uint64_t seed, uint64_t counter, int64_t blocks, uint32_t* out) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx512) {
    philox4x32_blocks_avx512(seed, counter, blocks, out);
  } else if (avx2) {
    philox4x32_blocks_avx2(seed, counter, blocks, out);
  } else {
    one_at_a_time(seed, counter, blocks, out);
  }
}

}  // namespace heed
