#include "nn/positional.h"

#include <cmath>

#include "autograd/ops.h"

namespace heed::nn {

Tensor sinusoidal_positions(int64_t positions, int64_t dim, DType dtype) {
  std::vector<double> table(positions * dim);
  for (int64_t p = 0; p < positions; ++p) {
    for (int64_t i = 0; i < dim; i += 2) {
      const double angle = p / std::pow(10000.0, static_cast<double>(i) / dim);
      table[p * dim + i] = std::sin(angle);
      if (i + 1 < dim) table[p * dim + i + 1] = std::cos(angle);
    }
  }
  return from_vector<double>(table, {positions, dim}).to(dtype);
}

}  // namespace heed::nn
