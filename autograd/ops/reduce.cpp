// sum and mean over dims, sum_to (un-broadcasting), argmax.
#include <algorithm>

#include "autograd/grad_mode.h"
#include "autograd/kernels/parallel.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "autograd/ops/elementwise.h"

namespace heed {
namespace {

struct SumBackward : Node {
  Shape input_shape, keepdim_shape;
  double scale = 1.0;  // 1/count for mean
  const char* name() const override { return scale == 1.0 ? "SumBackward" : "MeanBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

// True when `reduce` flags exactly the first one or more dims of a contiguous `a` and not all
// of them (un-broadcasting a [B, T, C] gradient to [T, C]).
bool reduces_leading_dims(const Tensor& a, const std::vector<bool>& reduce) {
  const int64_t leading = std::find(reduce.begin(), reduce.end(), false) - reduce.begin();
  return leading > 0 && leading < a.dim() &&
         std::find(reduce.begin() + leading, reduce.end(), true) == reduce.end() &&
         a.is_contiguous();
}

// reduce_sum's leading-dims case: out[j] = sum over r of a[r, j] for the `outer` rows of
// `inner` elements. Each output's additions run in the general loop's order (r ascending, in
// double), so the bits are the same, but along whole rows instead of one strided column per
// output element.
template <typename T>
void sum_leading_rows(const T* x, int64_t outer, int64_t inner, T* out) {
  constexpr int64_t kColumns = 512;
  parallel_for((inner + kColumns - 1) / kColumns, outer * kColumns, [&](int64_t block) {
    const int64_t j0 = block * kColumns, n = std::min(kColumns, inner - j0);
    double acc[kColumns] = {};
    for (int64_t r = 0; r < outer; ++r) {
      const T* row = x + r * inner + j0;
      for (int64_t j = 0; j < n; ++j) acc[j] += row[j];
    }
    for (int64_t j = 0; j < n; ++j) out[j0 + j] = static_cast<T>(acc[j]);
  });
}

// Sums `a` over the dims flagged in `reduce`, into a contiguous tensor of the keepdim shape.
// Accumulates in double; parallel over output elements.
Tensor reduce_sum(const Tensor& a, const std::vector<bool>& reduce) {
  const int64_t nd = a.dim();
  Shape out_shape(a.shape());
  Shape kept_shape, kept_strides, red_shape, red_strides;
  for (int64_t d = 0; d < nd; ++d) {
    if (reduce[d]) {
      out_shape[d] = 1;
      red_shape.push_back(a.shape()[d]);
      red_strides.push_back(a.strides()[d]);
    } else {
      kept_shape.push_back(a.shape()[d]);
      kept_strides.push_back(a.strides()[d]);
    }
  }
  Tensor out = Tensor::empty(out_shape, a.dtype());
  const int64_t outputs = shape_numel(kept_shape);
  const int64_t per_output = shape_numel(red_shape);
  dispatch_float(a.dtype(), "sum", [&]<typename T>() {
    const T* x = a.data<T>();
    T* o = out.data<T>();
    if (reduces_leading_dims(a, reduce)) {
      sum_leading_rows<T>(x, per_output, outputs, o);
      return;
    }
    parallel_for(outputs, per_output, [&](int64_t i) {
      int64_t base = 0, rest = i;
      for (int64_t d = static_cast<int64_t>(kept_shape.size()) - 1; d >= 0; --d) {
        base += (rest % kept_shape[d]) * kept_strides[d];
        rest /= kept_shape[d];
      }
      double acc = 0.0;
      strided_loop_serial(red_shape, red_strides, [&](int64_t off, int64_t n, int64_t step) {
        for (int64_t j = 0; j < n; ++j) acc += x[base + off + j * step];
      });
      o[i] = static_cast<T>(acc);
    });
  });
  return out;
}

std::vector<bool> dims_mask(const Tensor& a, const std::vector<int64_t>& dims, const char* op) {
  std::vector<bool> mask(a.dim(), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, a.dim(), op);
    HEED_CHECK(!mask[w], "{}: dimension {} listed twice", op, d);
    mask[w] = true;
  }
  return mask;
}

Tensor sum_impl(const Tensor& a, const std::vector<bool>& mask, bool keepdim, double scale) {
  Tensor out = reduce_sum(a, mask);
  const Shape keepdim_shape = out.shape();
  if (scale != 1.0) {
    NoGradGuard no_grad;
    out.mul_(scale);
  }
  if (!keepdim) {
    Shape squeezed;
    for (int64_t d = 0; d < a.dim(); ++d) {
      if (!mask[d]) squeezed.push_back(a.shape()[d]);
    }
    out =
        Tensor::from_storage(out.storage(), squeezed, contiguous_strides(squeezed), 0, out.dtype());
  }
  if (needs_grad({&a})) {
    auto node = std::make_shared<SumBackward>();
    node->input_shape = a.shape();
    node->keepdim_shape = keepdim_shape;
    node->scale = scale;
    attach_node(out, node, {a});
  }
  return out;
}

}  // namespace

Tensor sum(const Tensor& a) {
  return sum_impl(a, std::vector<bool>(a.dim(), true), false, 1.0);
}

Tensor sum(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  return sum_impl(a, dims_mask(a, dims, "sum"), keepdim, 1.0);
}

Tensor mean(const Tensor& a) {
  HEED_CHECK(a.numel() > 0, "mean: empty tensor of shape {}", a.shape_str());
  return sum_impl(a, std::vector<bool>(a.dim(), true), false, 1.0 / a.numel());
}

Tensor mean(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  std::vector<bool> mask = dims_mask(a, dims, "mean");
  int64_t count = 1;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (mask[d]) count *= a.shape()[d];
  }
  HEED_CHECK(count > 0, "mean: no elements to average in shape {}", a.shape_str());
  return sum_impl(a, mask, keepdim, 1.0 / count);
}

std::vector<Tensor> SumBackward::backward(const Tensor& g) {
  Tensor e = expand(reshape(g, keepdim_shape), input_shape);
  return {scale == 1.0 ? contiguous(e) : mul(e, scale)};
}

Tensor sum_to(const Tensor& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  const int64_t lead = a.dim() - static_cast<int64_t>(shape.size());
  HEED_CHECK(lead >= 0, "sum_to: cannot reduce shape {} to {}", a.shape_str(), shape_str(shape));
  std::vector<bool> mask(a.dim(), false);
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (d < lead) {
      mask[d] = true;
    } else if (shape[d - lead] == 1 && a.shape()[d] != 1) {
      mask[d] = true;
    } else {
      HEED_CHECK(shape[d - lead] == a.shape()[d], "sum_to: cannot reduce shape {} to {}",
                 a.shape_str(), shape_str(shape));
    }
  }
  return reshape(sum_impl(a, mask, true, 1.0), shape);
}

Tensor argmax(const Tensor& a, int64_t dim) {
  const int64_t d = wrap_dim(dim, a.dim(), "argmax");
  const int64_t n = a.shape()[d];
  const int64_t step = a.strides()[d];
  HEED_CHECK(n > 0, "argmax: empty dimension {} in shape {}", dim, a.shape_str());
  Shape out_shape = a.shape(), kept_strides = a.strides();
  out_shape.erase(out_shape.begin() + d);
  kept_strides.erase(kept_strides.begin() + d);
  Tensor out = Tensor::empty(out_shape, DType::i64);
  int64_t* o = out.data<int64_t>();
  dispatch_float(a.dtype(), "argmax", [&]<typename T>() {
    const T* x = a.data<T>();
    parallel_for(out.numel(), n, [&](int64_t i) {
      int64_t base = 0, rest = i;
      for (int64_t k = static_cast<int64_t>(out_shape.size()) - 1; k >= 0; --k) {
        base += (rest % out_shape[k]) * kept_strides[k];
        rest /= out_shape[k];
      }
      int64_t best = 0;
      for (int64_t j = 1; j < n; ++j) {
        if (x[base + j * step] > x[base + best * step]) best = j;
      }
      o[i] = best;
    });
  });
  return out;
}

}  // namespace heed
