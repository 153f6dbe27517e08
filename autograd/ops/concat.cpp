// concat along a dim, and split/chunk as slices of one tensor.
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/ops.h"

namespace heed {
namespace {

struct ConcatBackward : Node {
  int64_t dim;
  std::vector<int64_t> sizes;
  const char* name() const override { return "ConcatBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

}  // namespace

Tensor concat(const std::vector<Tensor>& tensors, int64_t dim) {
  HEED_CHECK(!tensors.empty(), "concat: no tensors given");
  const Tensor& first = tensors[0];
  const int64_t d = wrap_dim(dim, first.dim(), "concat");
  Shape shape = first.shape();
  shape[d] = 0;
  for (const Tensor& t : tensors) {
    bool same = t.dim() == first.dim() && t.dtype() == first.dtype();
    for (int64_t k = 0; same && k < t.dim(); ++k) same = k == d || t.shape()[k] == first.shape()[k];
    HEED_CHECK(same, "concat: {} {} does not match {} {} outside dimension {}", t.dtype(),
               t.shape_str(), first.dtype(), first.shape_str(), dim);
    shape[d] += t.shape()[d];
  }
  Tensor out = Tensor::empty(shape, first.dtype());
  {
    NoGradGuard no_grad;
    int64_t start = 0;
    for (const Tensor& t : tensors) {
      slice(out, d, start, start + t.shape()[d]).copy_(t);
      start += t.shape()[d];
    }
  }
  if (needs_grad(tensors)) {
    auto node = std::make_shared<ConcatBackward>();
    node->dim = d;
    for (const Tensor& t : tensors) node->sizes.push_back(t.shape()[d]);
    attach_node(out, node, tensors);
  }
  return out;
}

std::vector<Tensor> ConcatBackward::backward(const Tensor& g) {
  std::vector<Tensor> grads;
  int64_t start = 0;
  for (int64_t s : sizes) {
    grads.push_back(slice(g, dim, start, start + s));
    start += s;
  }
  return grads;
}

std::vector<Tensor> split(const Tensor& a, const std::vector<int64_t>& sizes, int64_t dim) {
  const int64_t d = wrap_dim(dim, a.dim(), "split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    HEED_CHECK(s >= 0, "split: negative size {}", s);
    total += s;
  }
  HEED_CHECK(total == a.shape()[d], "split: sizes sum to {} but dimension {} of {} has {}", total,
             dim, a.shape_str(), a.shape()[d]);
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (int64_t s : sizes) {
    parts.push_back(slice(a, d, start, start + s));
    start += s;
  }
  return parts;
}

std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim) {
  const int64_t d = wrap_dim(dim, a.dim(), "chunk");
  HEED_CHECK(chunks > 0, "chunk: chunks must be positive, got {}", chunks);
  const int64_t n = a.shape()[d];
  const int64_t each = (n + chunks - 1) / chunks;
  std::vector<int64_t> sizes;
  for (int64_t start = 0; start < n; start += each) sizes.push_back(std::min(each, n - start));
  return split(a, sizes, d);
}

}  // namespace heed
