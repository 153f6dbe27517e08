#include "autograd/random.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/parallel.h"

namespace heed {
namespace {

// Fills contiguous `t`: element i uses lanes of Philox block (offset + i / 2), two doubles
// per block; a normal comes from the Box-Muller transform of that pair.
template <bool Normal>
void fill_random(Tensor& t, Generator& generator, double a, double b) {
  HEED_CHECK(t.is_contiguous(), "random fill: tensor of shape {} is not contiguous", t.shape_str());
  const int64_t n = t.numel();
  const uint64_t seed = generator.seed();
  const uint64_t offset = generator.reserve_blocks((n + 1) / 2);
  dispatch_all(t.dtype(), "random fill", [&]<typename T>() {
    HEED_CHECK(is_floating(dtype_of<T>()), "random fill: expected a floating tensor, got {}",
               t.dtype());
    T* p = static_cast<T*>(t.raw_data());
    parallel_for((n + 1) / 2, 64, [&](int64_t pair) {
      const auto r = philox4x32(seed, offset + pair);
      double u1 = uints_to_unit_double(r[0], r[1]);
      double u2 = uints_to_unit_double(r[2], r[3]);
      double v0, v1;
      if constexpr (Normal) {
        const double radius = std::sqrt(-2.0 * std::log(1.0 - u1));  // 1-u1 is in (0, 1]
        v0 = a + b * radius * std::cos(2.0 * M_PI * u2);
        v1 = a + b * radius * std::sin(2.0 * M_PI * u2);
      } else {
        v0 = a + (b - a) * u1;
        v1 = a + (b - a) * u2;
      }
      p[2 * pair] = from_double<T>(v0);
      if (2 * pair + 1 < n) p[2 * pair + 1] = from_double<T>(v1);
    });
  });
  t.storage()->bump_version();
}

}  // namespace

Tensor randn(const Shape& shape, Generator& generator, DType dtype, double mean, double std) {
  Tensor t = Tensor::empty(shape, dtype);
  fill_random<true>(t, generator, mean, std);
  return t;
}

Tensor uniform(const Shape& shape, Generator& generator, double low, double high, DType dtype) {
  Tensor t = Tensor::empty(shape, dtype);
  fill_random<false>(t, generator, low, high);
  return t;
}

void normal_(Tensor& t, Generator& generator, double mean, double std) {
  HEED_CHECK(!(grad_enabled() && t.requires_grad()),
             "normal_: in-place init of a tensor that requires grad; use NoGradGuard");
  fill_random<true>(t, generator, mean, std);
}

void uniform_(Tensor& t, Generator& generator, double low, double high) {
  HEED_CHECK(!(grad_enabled() && t.requires_grad()),
             "uniform_: in-place init of a tensor that requires grad; use NoGradGuard");
  fill_random<false>(t, generator, low, high);
}

}  // namespace heed
