#pragma once
// OpenMP parallel loops, only where the work pays for waking the threads.
#include <omp.h>

#include <algorithm>
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

// Rows of `width` elements in groups of about `group_elements` (at least a row each):
// body(r0, r1) per group, the groups split across threads. Short rows then share whatever
// per-call cost the body pays once per group (a Philox call, a bf16 rounding call).
// `cost_per_element` weighs an element against kParallelGrain's element-operations.
template <typename F>
void parallel_for_row_groups(int64_t rows, int64_t width, int64_t group_elements, F&& body,
                             int64_t cost_per_element = 1) {
  const int64_t group = std::max<int64_t>(1, group_elements / std::max<int64_t>(width, 1));
  parallel_for((rows + group - 1) / group, group * width * cost_per_element,
               [&](int64_t g) { body(g * group, std::min(rows, (g + 1) * group)); });
}

}  // namespace heed
