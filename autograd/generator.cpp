#include "autograd/generator.h"

namespace heed {

namespace {

constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;

// One Philox round on a counter (c0..c3) under the round key (k0, k1).
inline void philox_round(uint32_t& c0, uint32_t& c1, uint32_t& c2, uint32_t& c3, uint32_t k0,
                         uint32_t k1) {
  const uint64_t p0 = static_cast<uint64_t>(kMul0) * c0;
  const uint64_t p1 = static_cast<uint64_t>(kMul1) * c2;
  const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
  const uint32_t n1 = static_cast<uint32_t>(p1);
  const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
  const uint32_t n3 = static_cast<uint32_t>(p0);
  c0 = n0, c1 = n1, c2 = n2, c3 = n3;
}

}  // namespace

std::array<uint32_t, 4> philox4x32(uint64_t seed, uint64_t counter) {
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
  uint32_t c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    philox_round(c0, c1, c2, c3, k0, k1);
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return {c0, c1, c2, c3};
}

// Also built for AVX-512, chosen at load time where the CPU has it: sixteen 32 x 32 -> 64
// multiplies per instruction instead of eight. (The build targets x86-64-v3 for the reason in
// CMakeLists.txt; one clone of a function of plain integer arithmetic is tested below it by
// tests/autograd/ops_test.cpp against the one-counter version.)
[[gnu::target_clones("avx512f", "default")]] void philox4x32_blocks(uint64_t seed, uint64_t counter,
                                                                    int64_t blocks, uint32_t* out) {
  // Each counter's ten rounds unroll into straight-line code, so the compiler vectorises
  // across counters (vector 32x32->64 multiplies) where philox4x32 runs one at a time.
  const uint32_t seed0 = static_cast<uint32_t>(seed), seed1 = static_cast<uint32_t>(seed >> 32);
  for (int64_t i = 0; i < blocks; ++i) {
    const uint64_t ctr = counter + static_cast<uint64_t>(i);
    uint32_t c0 = static_cast<uint32_t>(ctr), c1 = static_cast<uint32_t>(ctr >> 32);
    uint32_t c2 = 0, c3 = 0;
    uint32_t k0 = seed0, k1 = seed1;
#pragma GCC unroll 10
    for (int round = 0; round < 10; ++round) {
      philox_round(c0, c1, c2, c3, k0, k1);
      k0 += kWeyl0;
      k1 += kWeyl1;
    }
    out[4 * i] = c0, out[4 * i + 1] = c1, out[4 * i + 2] = c2, out[4 * i + 3] = c3;
  }
}

uint64_t Generator::next_below(uint64_t n) {
  if (n <= 1) return 0;
  // Rejection sampling on 64 bits: unbiased for every n.
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  while (true) {
    auto r = philox4x32(state_.seed, reserve_blocks(1));
    uint64_t x = (static_cast<uint64_t>(r[0]) << 32) | r[1];
    if (x < limit) return x % n;
  }
}

}  // namespace heed
