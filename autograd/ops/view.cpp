// Views (share storage, no copy) and the copies that layout changes need: reshape,
// transpose, permute, slice, select, unsqueeze, squeeze, expand, contiguous, clone, to_dtype.
#include <numeric>
#include <optional>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/ops.h"

namespace heed {
namespace {

Tensor make_view(const Tensor& a, Shape shape, Shape strides, int64_t offset) {
  return Tensor::from_storage(a.storage(), std::move(shape), std::move(strides), offset, a.dtype());
}

struct ReshapeBackward : Node {
  Shape input_shape;
  const char* name() const override { return "ReshapeBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

// Records that `out` is `input` seen with another shape (reshape, squeeze, unsqueeze).
Tensor attach_reshape(const Tensor& input, Tensor out, const Shape& input_shape) {
  if (needs_grad({&input})) {
    auto node = std::make_shared<ReshapeBackward>();
    node->input_shape = input_shape;
    attach_node(out, node, {input});
  }
  return out;
}

struct AliasBackward : Node {
  const char* name() const override { return "AliasBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override { return {g}; }
};

struct PermuteBackward : Node {
  Shape inverse;
  const char* name() const override { return "PermuteBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

// Gradient of a strided sub-view (slice, select): zeros of the input's shape with the
// gradient written into the same sub-view.
struct SubviewBackward : Node {
  const char* op_name;
  Shape input_shape;
  Shape view_shape, view_strides;  // relative to a contiguous tensor of input_shape
  int64_t view_offset = 0;
  explicit SubviewBackward(const char* n) : op_name(n) {}
  const char* name() const override { return op_name; }
  std::vector<Tensor> backward(const Tensor& g) override;
  bool accumulate_backward(const Tensor& g, Tensor& pending) override;
};

struct ExpandBackward : Node {
  Shape input_shape;
  const char* name() const override { return "ExpandBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

struct CopyBackward : Node {
  const char* op_name;
  DType input_dtype;
  CopyBackward(const char* n, DType t) : op_name(n), input_dtype(t) {}
  const char* name() const override { return op_name; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

// Records a sub-view node: the view's geometry is re-expressed on a contiguous input.
Tensor attach_subview(const Tensor& a, Tensor out, const char* name, Shape contiguous_view_strides,
                      int64_t contiguous_view_offset) {
  if (needs_grad({&a})) {
    auto node = std::make_shared<SubviewBackward>(name);
    node->input_shape = a.shape();
    node->view_shape = out.shape();
    node->view_strides = std::move(contiguous_view_strides);
    node->view_offset = contiguous_view_offset;
    attach_node(out, node, {a});
  }
  return out;
}

// The strides that view a tensor of (shape, strides) as `target` without copying, if any:
// dims are split or merged only within runs that are contiguous in memory.
std::optional<Shape> strides_for_view(const Shape& shape, const Shape& strides,
                                      const Shape& target) {
  if (shape.empty()) return std::nullopt;
  Shape out(target.size());
  int64_t view_d = static_cast<int64_t>(target.size()) - 1;
  int64_t chunk_stride = strides.back(), tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= shape[d];
    const bool chunk_ends =
        d == 0 || (shape[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || target[view_d] == 1)) {
      out[view_d] = view_numel * chunk_stride;
      view_numel *= target[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (d > 0) {
      chunk_stride = strides[d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

}  // namespace

Tensor reshape(const Tensor& a, const Shape& requested) {
  Shape shape = requested;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      HEED_CHECK(infer < 0, "reshape: more than one -1 in {}", shape_str(requested));
      infer = static_cast<int64_t>(i);
    } else {
      HEED_CHECK(shape[i] >= 0, "reshape: negative size in {}", shape_str(requested));
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    HEED_CHECK(known > 0 && a.numel() % known == 0, "reshape: cannot view {} as {}", a.shape_str(),
               shape_str(requested));
    shape[infer] = a.numel() / known;
  }
  HEED_CHECK(shape_numel(shape) == a.numel(), "reshape: cannot view {} ({} elements) as {}",
             a.shape_str(), a.numel(), shape_str(requested));
  if (shape == a.shape()) return a;
  Tensor source = a;
  Shape strides = contiguous_strides(shape);
  if (a.numel() > 0 && !a.is_contiguous()) {
    if (auto view = strides_for_view(a.shape(), a.strides(), shape)) {
      strides = *view;
    } else {
      source = contiguous(a);
    }
  }
  Tensor out = Tensor::from_storage(source.storage(), shape, strides, source.offset(), a.dtype());
  return attach_reshape(source, out, a.shape());
}

Tensor alias(const Tensor& a) {
  if (!needs_grad({&a})) return a;
  Tensor out = Tensor::from_storage(a.storage(), a.shape(), a.strides(), a.offset(), a.dtype());
  attach_node(out, std::make_shared<AliasBackward>(), {a});
  return out;
}

std::vector<Tensor> ReshapeBackward::backward(const Tensor& g) {
  return {reshape(g, input_shape)};
}

Tensor permute(const Tensor& a, const Shape& dims) {
  HEED_CHECK(static_cast<int64_t>(dims.size()) == a.dim(), "permute: {} dims given for shape {}",
             dims.size(), a.shape_str());
  Shape shape(a.dim()), strides(a.dim()), inverse(a.dim());
  std::vector<bool> seen(a.dim(), false);
  for (int64_t i = 0; i < a.dim(); ++i) {
    int64_t d = wrap_dim(dims[i], a.dim(), "permute");
    HEED_CHECK(!seen[d], "permute: dimension {} repeated in {}", d, shape_str(dims));
    seen[d] = true;
    shape[i] = a.shape()[d];
    strides[i] = a.strides()[d];
    inverse[d] = i;
  }
  Tensor out = make_view(a, shape, strides, a.offset());
  if (needs_grad({&a})) {
    auto node = std::make_shared<PermuteBackward>();
    node->inverse = inverse;
    attach_node(out, node, {a});
  }
  return out;
}

std::vector<Tensor> PermuteBackward::backward(const Tensor& g) {
  return {permute(g, inverse)};
}

Tensor transpose(const Tensor& a, int64_t d0, int64_t d1) {
  Shape dims(a.dim());
  std::iota(dims.begin(), dims.end(), 0);
  std::swap(dims[wrap_dim(d0, a.dim(), "transpose")], dims[wrap_dim(d1, a.dim(), "transpose")]);
  return permute(a, dims);
}

Tensor slice(const Tensor& a, int64_t dim, int64_t start, int64_t end, int64_t step) {
  const int64_t d = wrap_dim(dim, a.dim(), "slice");
  const int64_t n = a.shape()[d];
  HEED_CHECK(step > 0, "slice: step must be positive, got {}", step);
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape shape = a.shape(), strides = a.strides();
  shape[d] = (end - start + step - 1) / step;
  strides[d] *= step;
  Tensor out = make_view(a, shape, strides, a.offset() + start * a.strides()[d]);
  Shape cs = contiguous_strides(a.shape());
  const int64_t coffset = start * cs[d];
  cs[d] *= step;
  return attach_subview(a, out, "SliceBackward", cs, coffset);
}

Tensor select(const Tensor& a, int64_t dim, int64_t index) {
  const int64_t d = wrap_dim(dim, a.dim(), "select");
  const int64_t n = a.shape()[d];
  HEED_CHECK(index >= -n && index < n, "select: index {} out of range for dimension {} of size {}",
             index, dim, n);
  if (index < 0) index += n;
  Shape shape = a.shape(), strides = a.strides();
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  Tensor out = make_view(a, shape, strides, a.offset() + index * a.strides()[d]);
  Shape cs = contiguous_strides(a.shape());
  const int64_t coffset = index * cs[d];
  cs.erase(cs.begin() + d);
  return attach_subview(a, out, "SelectBackward", cs, coffset);
}

std::vector<Tensor> SubviewBackward::backward(const Tensor& g) {
  Tensor grad = zeros(input_shape, g.dtype());
  Tensor::from_storage(grad.storage(), view_shape, view_strides, view_offset, g.dtype()).copy_(g);
  return {grad};
}

bool SubviewBackward::accumulate_backward(const Tensor& g, Tensor& pending) {
  const bool floating = g.dtype() == DType::f32 || g.dtype() == DType::f64;
  if (!floating || pending.shape() != input_shape || pending.dtype() != g.dtype() ||
      !pending.is_contiguous()) {
    return false;
  }
  Tensor::from_storage(pending.storage(), view_shape, view_strides, pending.offset() + view_offset,
                       g.dtype())
      .add_(g);
  return true;
}

Tensor unsqueeze(const Tensor& a, int64_t dim) {
  const int64_t d = dim < 0 ? dim + a.dim() + 1 : dim;
  HEED_CHECK(d >= 0 && d <= a.dim(), "unsqueeze: dimension {} out of range for {} dims", dim,
             a.dim());
  Shape shape = a.shape();
  shape.insert(shape.begin() + d, 1);
  if (a.is_contiguous()) return reshape(a, shape);
  Shape strides = a.strides();
  strides.insert(strides.begin() + d, d < a.dim() ? a.strides()[d] * a.shape()[d] : 1);
  Tensor out = make_view(a, shape, strides, a.offset());
  return attach_reshape(a, out, a.shape());
}

Tensor squeeze(const Tensor& a, int64_t dim) {
  const int64_t d = wrap_dim(dim, a.dim(), "squeeze");
  if (a.shape()[d] != 1) return a;
  Shape shape = a.shape(), strides = a.strides();
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  Tensor out = make_view(a, shape, strides, a.offset());
  return attach_reshape(a, out, a.shape());
}

Tensor expand(const Tensor& a, const Shape& shape) {
  HEED_CHECK(static_cast<int64_t>(shape.size()) >= a.dim(), "expand: cannot expand {} to {}",
             a.shape_str(), shape_str(shape));
  if (shape == a.shape()) return a;
  Shape strides(shape.size(), 0);
  const size_t lead = shape.size() - a.shape().size();
  for (size_t i = 0; i < a.shape().size(); ++i) {
    const int64_t s = a.shape()[i];
    HEED_CHECK(s == shape[lead + i] || s == 1, "expand: cannot expand {} to {}", a.shape_str(),
               shape_str(shape));
    strides[lead + i] = s == 1 ? 0 : a.strides()[i];
  }
  Tensor out = make_view(a, shape, strides, a.offset());
  if (needs_grad({&a})) {
    auto node = std::make_shared<ExpandBackward>();
    node->input_shape = a.shape();
    attach_node(out, node, {a});
  }
  return out;
}

std::vector<Tensor> ExpandBackward::backward(const Tensor& g) {
  return {sum_to(g, input_shape)};
}

Tensor clone(const Tensor& a) {
  Tensor out = Tensor::empty(a.shape(), a.dtype());
  {
    NoGradGuard no_grad;
    out.copy_(a);
  }
  if (needs_grad({&a}))
    attach_node(out, std::make_shared<CopyBackward>("CloneBackward", a.dtype()), {a});
  return out;
}

Tensor contiguous(const Tensor& a) {
  if (a.is_contiguous()) return a;
  Tensor out = Tensor::empty(a.shape(), a.dtype());
  {
    NoGradGuard no_grad;
    out.copy_(a);
  }
  if (needs_grad({&a})) {
    attach_node(out, std::make_shared<CopyBackward>("ContiguousBackward", a.dtype()), {a});
  }
  return out;
}

Tensor to_dtype(const Tensor& a, DType dtype) {
  if (a.dtype() == dtype) return a;
  Tensor out = Tensor::empty(a.shape(), dtype);
  {
    NoGradGuard no_grad;
    out.copy_(a);
  }
  if (needs_grad({&a})) {
    HEED_CHECK(is_floating(dtype), "to_dtype: gradients cannot flow through a cast to {}", dtype);
    attach_node(out, std::make_shared<CopyBackward>("ToDtypeBackward", a.dtype()), {a});
  }
  return out;
}

std::vector<Tensor> CopyBackward::backward(const Tensor& g) {
  return {g.dtype() == input_dtype ? g : to_dtype(g, input_dtype)};
}

}  // namespace heed
