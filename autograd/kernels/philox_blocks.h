#pragma once
// The vector builds behind philox4x32_blocks (autograd/generator.h), which picks one for the
// CPU it runs on. Declared here so that the tests can check each against philox4x32.
#include <cstdint>

namespace heed {

// Philox-4x32's round multipliers and key increments (Salmon et al. 2011).
inline constexpr uint32_t kPhiloxMul0 = 0xD2511F53u, kPhiloxMul1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxWeyl0 = 0x9E3779B9u, kPhiloxWeyl1 = 0xBB67AE85u;

// Callable only where the CPU has AVX-512F (respectively AVX2).
void philox4x32_blocks_avx512(uint64_t seed, uint64_t counter, int64_t blocks, uint32_t* out);
void philox4x32_blocks_avx2(uint64_t seed, uint64_t counter, int64_t blocks, uint32_t* out);

}  // namespace heed
