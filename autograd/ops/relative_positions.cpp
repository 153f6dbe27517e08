// relative_position_gather: the [T, T] relative-position scores from their [T, 2T - 1] products
// with the distance table, as BERT's relative_key and relative_key_query attention adds them.
#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/parallel.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "base/profile.h"

namespace heed {
namespace {

// For each of `planes` [T, 2T - 1] planes of `in` and [T, T] planes of `out`: out[l, r] =
// in[row, l - r + T - 1] with row = l (by query) or r (by key). `Forward` copies in -> out;
// otherwise out -> in, the entries of `in` that no (l, r) reads left as they are. Every entry of
// `in` is read by at most one (l, r): for a fixed row the distance l - r names r (by query) or l
// (by key), so backward is a plain scatter, no sums.
template <bool Forward, typename T>
void gather_planes(T* in, T* out, int64_t planes, int64_t t, bool by_key) {
  const int64_t width = 2 * t - 1;
  parallel_for(planes, t * t, [&](int64_t p) {
    T* in_plane = in + p * t * width;
    T* out_plane = out + p * t * t;
    for (int64_t l = 0; l < t; ++l) {
      for (int64_t r = 0; r < t; ++r) {
        T& from = in_plane[(by_key ? r : l) * width + (l - r + t - 1)];
        T& to = out_plane[l * t + r];
        if constexpr (Forward) {
          to = from;
        } else {
          from = to;
        }
      }
    }
  });
}

struct RelativePositionGatherBackward : Node {
  Shape in_shape;
  int64_t planes = 0, length = 0;
  bool by_key = false;
  const char* name() const override { return "RelativePositionGatherBackward"; }
  std::vector<Tensor> backward(const Tensor& g_in) override {
    Tensor g = g_in.contiguous();
    Tensor grad = zeros(in_shape, g.dtype());
    dispatch_float(g.dtype(), "relative_position_gather backward", [&]<typename T>() {
      gather_planes<false>(grad.data<T>(), g.data<T>(), planes, length, by_key);
    });
    return {grad};
  }
};

}  // namespace

Tensor relative_position_gather(const Tensor& x, bool by_key) {
  OpTimer timer("relative_position_gather");
  HEED_CHECK(x.dim() >= 2 && x.size(-1) == 2 * x.size(-2) - 1,
             "relative_position_gather: x must be [.., T, 2T - 1], got {}", x.shape_str());
  const int64_t t = x.size(-2);
  Shape out_shape = x.shape();
  out_shape.back() = t;
  const int64_t planes = x.numel() / (t * (2 * t - 1));
  Tensor in = x.contiguous();
  Tensor out = Tensor::empty(out_shape, x.dtype());
  dispatch_float(x.dtype(), "relative_position_gather", [&]<typename T>() {
    gather_planes<true>(in.data<T>(), out.data<T>(), planes, t, by_key);
  });
  if (needs_grad({&x})) {
    auto node = std::make_shared<RelativePositionGatherBackward>();
    node->in_shape = x.shape();
    node->planes = planes;
    node->length = t;
    node->by_key = by_key;
    attach_node(out, node, {x});
  }
  return out;
}

}  // namespace heed
