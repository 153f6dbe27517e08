#include "autograd/generator.h"

#include "autograd/kernels/philox_blocks.h"

namespace heed {

namespace {

// One Philox round on a counter (c0..c3) under the round key (k0, k1).
inline void philox_round(uint32_t& c0, uint32_t& c1, uint32_t& c2, uint32_t& c3, uint32_t k0,
                         uint32_t k1) {
  const uint64_t p0 = static_cast<uint64_t>(kPhiloxMul0) * c0;
  const uint64_t p1 = static_cast<uint64_t>(kPhiloxMul1) * c2;
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
    k0 += kPhiloxWeyl0;
    k1 += kPhiloxWeyl1;
  }
  return {c0, c1, c2, c3};
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
