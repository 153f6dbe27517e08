#include <omp.h>

#include "autograd/ops.h"

namespace heed {

void set_num_threads(int threads) {
  HEED_CHECK(threads > 0, "set_num_threads: need at least one thread, got {}", threads);
  omp_set_num_threads(threads);
}

int num_threads() {
  return omp_get_max_threads();
}

}  // namespace heed
