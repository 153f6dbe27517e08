#pragma once
// OpenMP parallel loops, only where the work pays for waking the threads.
#include <omp.h>

#include <cstdint>

namespace heed {

// Below this many element-operations a loop runs on the calling thread.
constexpr int64_t kParallelGrain = 32768;

template <typename F>
void parallel_for(int64_t n, int64_t cost_per_item, F&& body) {
  if (n <= 0) return;
  if (n * cost_per_item < kParallelGrain || n == 1 || omp_in_parallel()) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) body(i);
}

}  // namespace heed
