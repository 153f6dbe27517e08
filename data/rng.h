#pragma once
// The data layer's random numbers: xoshiro256** seeded through splitmix64. Streams are
// derived from (seed, purpose, counters), so a batch's randomness depends only on its
// position, and a loader position restored from a checkpoint replays the same batches.
#include <array>
#include <cstdint>

namespace heed::data {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0);
  // An independent stream for (seed, a, b, c), e.g. (seed, epoch, batch, purpose).
  static Rng for_stream(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0);

  uint64_t next_u64();
  // Uniform in [0, n), unbiased (Lemire's multiply-and-reject); n > 0.
  uint64_t uniform_int(uint64_t n);
  // Uniform in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  bool bernoulli(double p) { return uniform01() < p; }

  using State = std::array<uint64_t, 4>;
  const State& state() const { return s_; }
  void set_state(const State& s) { s_ = s; }

 private:
  State s_;
};

uint64_t splitmix64(uint64_t& x);

}  // namespace heed::data
