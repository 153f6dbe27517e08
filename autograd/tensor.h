#pragma once
// Tensor: a cheap handle on a shared TensorImpl. Row-major, (batch, time, channels).
// Views (reshape, transpose, slice, ...) share storage; kernels ask for contiguous inputs
// where they need them.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/storage.h"
#include "base/dtype.h"

namespace heed {

using Shape = std::vector<int64_t>;

class Node;
class Tensor;

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  Shape strides;       // in elements
  int64_t offset = 0;  // in elements
  DType dtype = DType::f32;

  bool requires_grad = false;            // set by the user on leaves, or by ops on results
  std::shared_ptr<TensorImpl> grad;      // accumulated gradient of a leaf
  std::shared_ptr<Node> grad_fn;         // the node that made this tensor (null for leaves)
  std::weak_ptr<Node> grad_accumulator;  // a leaf's AccumulateGrad, made on first use
  // A leaf's post-accumulate-grad hooks (autograd/grad_ready_hook.h), each with its id.
  std::vector<std::pair<uint64_t, std::function<void(const TensorImpl&)>>> grad_ready_hooks;
};

std::string shape_str(const Shape& shape);
int64_t shape_numel(const Shape& shape);
Shape contiguous_strides(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // A fresh, uninitialised, contiguous tensor.
  static Tensor empty(const Shape& shape, DType dtype = DType::f32);
  // A view of `storage` (no copy).
  static Tensor from_storage(std::shared_ptr<Storage> storage, Shape shape, Shape strides,
                             int64_t offset, DType dtype);

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

  const Shape& shape() const { return impl_->shape; }
  const Shape& strides() const { return impl_->strides; }
  int64_t dim() const { return static_cast<int64_t>(impl_->shape.size()); }
  int64_t size(int64_t d) const;  // negative d counts from the end
  int64_t stride(int64_t d) const;
  int64_t numel() const { return shape_numel(impl_->shape); }
  int64_t offset() const { return impl_->offset; }
  DType dtype() const { return impl_->dtype; }
  bool is_contiguous() const;
  std::string shape_str() const { return heed::shape_str(impl_->shape); }
  const std::shared_ptr<Storage>& storage() const { return impl_->storage; }
  // Whether this handle is the only one on its tensor and no other tensor views its storage:
  // then writing over it changes nothing anyone else can see.
  bool sole_owner() const { return impl_.use_count() == 1 && impl_->storage.use_count() == 1; }
  uint64_t version() const { return impl_->storage->version(); }

  // Pointer to the first element; throws if T is not this tensor's dtype.
  template <typename T>
  T* data() const {
    HEED_CHECK(dtype_of<T>() == impl_->dtype, "data<{}>() on a {} tensor",
               dtype_name(dtype_of<T>()), impl_->dtype);
    return static_cast<T*>(raw_data());
  }
  void* raw_data() const {
    return static_cast<char*>(impl_->storage->data()) + impl_->offset * dtype_size(impl_->dtype);
  }

  // Values, converted to T (copies; any layout).
  template <typename T>
  std::vector<T> to_vector() const;
  // The single value of a one-element tensor.
  double item() const;

  // --- autograd ---
  bool requires_grad() const { return impl_->requires_grad; }
  // Only for leaves (tensors no op produced): marks them as parameters/inputs to differentiate.
  Tensor& set_requires_grad(bool value);
  bool is_leaf() const { return impl_->grad_fn == nullptr; }
  const std::shared_ptr<Node>& grad_fn() const { return impl_->grad_fn; }
  Tensor grad() const { return Tensor(impl_->grad); }
  void set_grad(const Tensor& g) { impl_->grad = g.impl_; }
  void zero_grad() { impl_->grad.reset(); }
  // Keeps the gradient of a non-leaf after backward.
  void retain_grad();
  // Runs reverse-mode autodiff from this tensor. A non-scalar needs `gradient`.
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false) const;
  // The same data, cut from the graph.
  Tensor detach() const;

  // --- in-place writes (bump the version counter; refused on leaves that require grad
  //     while grad mode is on, as a silent wrong gradient would follow) ---
  Tensor& fill_(double value);
  Tensor& zero_() { return fill_(0.0); }
  Tensor& copy_(const Tensor& src);                       // same shape; converts dtype
  Tensor& add_(const Tensor& other, double alpha = 1.0);  // same shape
  Tensor& mul_(double value);

  // --- conveniences that forward to the ops in ops.h ---
  Tensor reshape(const Shape& shape) const;
  Tensor view(const Shape& shape) const { return reshape(shape); }
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor permute(const Shape& dims) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze(int64_t dim) const;
  Tensor contiguous() const;
  Tensor to(DType dtype) const;
  Tensor clone() const;

 private:
  void check_inplace(const char* op) const;
  std::shared_ptr<TensorImpl> impl_;
};

// --- factories ---
Tensor zeros(const Shape& shape, DType dtype = DType::f32);
Tensor ones(const Shape& shape, DType dtype = DType::f32);
Tensor full(const Shape& shape, double value, DType dtype = DType::f32);
Tensor arange(int64_t start, int64_t end, DType dtype = DType::i64);
template <typename T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape);
Tensor scalar_tensor(double value, DType dtype = DType::f32);

// NumPy broadcasting of two shapes; throws naming `op` and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// The strides with which `t` is read as if broadcast to `shape` (0 along broadcast dims).
Shape broadcast_strides(const Tensor& t, const Shape& shape);

// Normalises a possibly negative dimension index, naming `op` if it is out of range.
int64_t wrap_dim(int64_t d, int64_t ndim, const char* op);

}  // namespace heed
