#include "data/rng.h"

#include "base/error.h"

namespace heed::data {
namespace {
uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}
}  // namespace

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Rng::Rng(uint64_t seed) {
  for (auto& word : s_) word = splitmix64(seed);
}

Rng Rng::for_stream(uint64_t seed, uint64_t a, uint64_t b, uint64_t c) {
  // Chain the inputs through splitmix64 so nearby counters give unrelated streams.
  uint64_t x = seed;
  uint64_t h = splitmix64(x);
  for (uint64_t v : {a, b, c}) {
    x = h ^ v;
    h = splitmix64(x);
  }
  return Rng(h);
}

uint64_t Rng::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t Rng::uniform_int(uint64_t n) {
  HEED_CHECK(n > 0, "uniform_int needs a positive bound");
  unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * n;
  auto low = static_cast<uint64_t>(m);
  if (low < n) {
    const uint64_t threshold = -n % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next_u64()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

}  // namespace heed::data
