#pragma once
// A counter-based random generator (Philox-4x32-10, as in Salmon et al. 2011 and cuRAND).
// Any random number is a pure function of (seed, counter), so kernels draw in parallel
// without shared state, and the whole state that a checkpoint must keep is two integers.
#include <array>
#include <cstdint>

namespace heed {

std::array<uint32_t, 4> philox4x32(uint64_t seed, uint64_t counter);
// philox4x32 of counters counter .. counter + blocks - 1, written one after another
// (4 * blocks words): the same numbers, computed many counters at a time.
void philox4x32_blocks(uint64_t seed, uint64_t counter, int64_t blocks, uint32_t* out);

// A uniform float in [0, 1) from 24 random bits.
inline float uint_to_unit_float(uint32_t x) {
  return (x >> 8) * (1.0f / 16777216.0f);
}
// A uniform double in [0, 1) from 53 random bits.
inline double uints_to_unit_double(uint32_t hi, uint32_t lo) {
  uint64_t bits = (static_cast<uint64_t>(hi) << 21) ^ (lo >> 11);
  return (bits & ((uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
}

class Generator {
 public:
  struct State {
    uint64_t seed = 0;
    uint64_t offset = 0;
  };

  explicit Generator(uint64_t seed = 0) : state_{seed, 0} {}

  // Reserves `n` Philox blocks (4 x 32 bits each) and returns the first block's counter.
  uint64_t reserve_blocks(uint64_t n) {
    uint64_t first = state_.offset;
    state_.offset += n;
    return first;
  }
  uint64_t seed() const { return state_.seed; }
  State state() const { return state_; }
  void set_state(const State& s) { state_ = s; }

  // Scalar draws, for shuffling and sampling (each uses one block).
  uint32_t next_u32() { return philox4x32(state_.seed, reserve_blocks(1))[0]; }
  double next_double() {
    auto r = philox4x32(state_.seed, reserve_blocks(1));
    return uints_to_unit_double(r[0], r[1]);
  }
  // Uniform integer in [0, n) without modulo bias.
  uint64_t next_below(uint64_t n);

 private:
  State state_;
};

}  // namespace heed
