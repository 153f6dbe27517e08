#include "autograd/tensor.h"

#include <fmt/ranges.h>

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/strided_loop.h"
#include "autograd/kernels/wide_loops.h"
#include "autograd/node.h"
#include "autograd/ops.h"

namespace heed {

std::string shape_str(const Shape& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

int64_t wrap_dim(int64_t d, int64_t ndim, const char* op) {
  int64_t wrapped = d < 0 ? d + ndim : d;
  HEED_CHECK(wrapped >= 0 && wrapped < std::max<int64_t>(ndim, 1),
             "{}: dimension {} out of range for a tensor of {} dims", op, d, ndim);
  return wrapped;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    HEED_CHECK(da == db || da == 1 || db == 1, "{}: shapes {} and {} do not broadcast", op,
               shape_str(a), shape_str(b));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_strides(const Tensor& t, const Shape& shape) {
  Shape out(shape.size(), 0);
  const size_t lead = shape.size() - t.shape().size();
  for (size_t i = 0; i < t.shape().size(); ++i) {
    out[lead + i] = t.shape()[i] == 1 ? 0 : t.strides()[i];
  }
  return out;
}

Tensor Tensor::empty(const Shape& shape, DType dtype) {
  for (int64_t s : shape)
    HEED_CHECK(s >= 0, "empty: negative size in shape {}", heed::shape_str(shape));
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(shape_numel(shape) * dtype_size(dtype));
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::from_storage(std::shared_ptr<Storage> storage, Shape shape, Shape strides,
                            int64_t offset, DType dtype) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

int64_t Tensor::size(int64_t d) const {
  return impl_->shape[wrap_dim(d, dim(), "size")];
}
int64_t Tensor::stride(int64_t d) const {
  return impl_->strides[wrap_dim(d, dim(), "stride")];
}

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (impl_->shape[d] == 1) continue;
    if (impl_->strides[d] != expected) return false;
    expected *= impl_->shape[d];
  }
  return true;
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  Tensor c = heed::contiguous(*this);
  std::vector<T> out(numel());
  dispatch_all(dtype(), "to_vector", [&]<typename S>() {
    const S* src = static_cast<const S*>(c.raw_data());
    for (int64_t i = 0; i < numel(); ++i) out[i] = from_double<T>(to_double(src[i]));
  });
  return out;
}
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;
template std::vector<int32_t> Tensor::to_vector<int32_t>() const;
template std::vector<uint8_t> Tensor::to_vector<uint8_t>() const;

double Tensor::item() const {
  HEED_CHECK(numel() == 1, "item: tensor of shape {} has {} elements, not one", shape_str(),
             numel());
  return to_vector<double>()[0];
}

Tensor& Tensor::set_requires_grad(bool value) {
  HEED_CHECK(is_leaf(),
             "set_requires_grad: only leaves can be marked; this tensor of shape {} "
             "was produced by {}",
             shape_str(), "an op");
  HEED_CHECK(!value || is_floating(dtype()),
             "set_requires_grad: a {} tensor cannot require grad (floating dtypes only)", dtype());
  impl_->requires_grad = value;
  return *this;
}

void Tensor::backward(const Tensor& gradient, bool retain_graph) const {
  run_backward(*this, gradient, retain_graph);
}

void Tensor::retain_grad() {
  if (is_leaf()) return;  // leaves keep their gradient anyway
  impl_->grad_fn->retained_outputs.push_back(impl_);
}

Tensor Tensor::detach() const {
  return from_storage(impl_->storage, impl_->shape, impl_->strides, impl_->offset, impl_->dtype);
}

void Tensor::check_inplace(const char* op) const {
  HEED_CHECK(!(grad_enabled() && requires_grad()),
             "{}: in-place write to a tensor of shape {} that requires grad; use NoGradGuard "
             "(e.g. for optimizer updates) or an out-of-place op",
             op, shape_str());
}

Tensor& Tensor::fill_(double value) {
  check_inplace("fill_");
  dispatch_all(dtype(), "fill_", [&]<typename T>() {
    T* p = static_cast<T*>(raw_data());
    const T v = from_double<T>(value);
    strided_loop<1>(shape(), {strides()}, [&](auto base, int64_t n, auto step) {
      for (int64_t i = 0; i < n; ++i) p[base[0] + i * step[0]] = v;
    });
  });
  impl_->storage->bump_version();
  return *this;
}

Tensor& Tensor::copy_(const Tensor& src) {
  check_inplace("copy_");
  HEED_CHECK(src.shape() == shape(), "copy_: source of shape {} into a tensor of shape {}",
             src.shape_str(), shape_str());
  dispatch_all(dtype(), "copy_", [&]<typename D>() {
    dispatch_all(src.dtype(), "copy_", [&]<typename S>() {
      D* d = static_cast<D*>(raw_data());
      const S* s = static_cast<const S*>(src.raw_data());
      strided_loop<2>(shape(), {strides(), src.strides()}, [&](auto base, int64_t n, auto step) {
        if constexpr (std::is_same_v<D, bf16> && std::is_same_v<S, float>) {
          // The bf16 products' operands (attention's q, k and v): the AVX-512 loop where the
          // CPU has it, the same bits as the loop below.
          if (step[0] == 1 && step[1] == 1) {
            wide::round_to_bf16(s + base[1], n, d + base[0]);
            return;
          }
        }
        for (int64_t i = 0; i < n; ++i) {
          if constexpr (std::is_same_v<D, S>) {
            d[base[0] + i * step[0]] = s[base[1] + i * step[1]];
          } else if constexpr (std::is_same_v<D, bf16> && std::is_same_v<S, float>) {
            // Strided rows (a unit-stride row took the wide loop above): element by element.
            d[base[0] + i * step[0]].bits = bf16_bits_of(s[base[1] + i * step[1]]);
          } else {
            d[base[0] + i * step[0]] = from_double<D>(to_double(s[base[1] + i * step[1]]));
          }
        }
      });
    });
  });
  impl_->storage->bump_version();
  return *this;
}

Tensor& Tensor::add_(const Tensor& other, double alpha) {
  check_inplace("add_");
  HEED_CHECK(other.shape() == shape() && other.dtype() == dtype(), "add_: {} {} into {} {}",
             other.dtype(), other.shape_str(), dtype(), shape_str());
  dispatch_float(dtype(), "add_", [&]<typename T>() {
    T* d = static_cast<T*>(raw_data());
    const T* s = static_cast<const T*>(other.raw_data());
    const T a = static_cast<T>(alpha);
    strided_loop<2>(shape(), {strides(), other.strides()}, [&](auto base, int64_t n, auto step) {
      T* dp = d + base[0];
      const T* sp = s + base[1];
      if (step[0] == 1 && step[1] == 1) {
        for (int64_t i = 0; i < n; ++i) dp[i] += a * sp[i];
      } else {
        for (int64_t i = 0; i < n; ++i) dp[i * step[0]] += a * sp[i * step[1]];
      }
    });
  });
  impl_->storage->bump_version();
  return *this;
}

Tensor& Tensor::mul_(double value) {
  check_inplace("mul_");
  dispatch_float(dtype(), "mul_", [&]<typename T>() {
    T* d = static_cast<T*>(raw_data());
    const T v = static_cast<T>(value);
    strided_loop<1>(shape(), {strides()}, [&](auto base, int64_t n, auto step) {
      for (int64_t i = 0; i < n; ++i) d[base[0] + i * step[0]] *= v;
    });
  });
  impl_->storage->bump_version();
  return *this;
}

Tensor Tensor::reshape(const Shape& s) const {
  return heed::reshape(*this, s);
}
Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  return heed::transpose(*this, d0, d1);
}
Tensor Tensor::permute(const Shape& dims) const {
  return heed::permute(*this, dims);
}
Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step) const {
  return heed::slice(*this, d, start, end, step);
}
Tensor Tensor::select(int64_t d, int64_t index) const {
  return heed::select(*this, d, index);
}
Tensor Tensor::unsqueeze(int64_t d) const {
  return heed::unsqueeze(*this, d);
}
Tensor Tensor::squeeze(int64_t d) const {
  return heed::squeeze(*this, d);
}
Tensor Tensor::contiguous() const {
  return heed::contiguous(*this);
}
Tensor Tensor::to(DType t) const {
  return heed::to_dtype(*this, t);
}
Tensor Tensor::clone() const {
  return heed::clone(*this);
}

Tensor zeros(const Shape& shape, DType dtype) {
  return full(shape, 0.0, dtype);
}
Tensor ones(const Shape& shape, DType dtype) {
  return full(shape, 1.0, dtype);
}
Tensor full(const Shape& shape, double value, DType dtype) {
  Tensor t = Tensor::empty(shape, dtype);
  t.fill_(value);
  return t;
}
Tensor scalar_tensor(double value, DType dtype) {
  return full({}, value, dtype);
}

Tensor arange(int64_t start, int64_t end, DType dtype) {
  HEED_CHECK(end >= start, "arange: end {} before start {}", end, start);
  Tensor t = Tensor::empty({end - start}, dtype);
  dispatch_all(dtype, "arange", [&]<typename T>() {
    T* p = t.data<T>();
    for (int64_t i = 0; i < end - start; ++i) p[i] = from_double<T>(static_cast<double>(start + i));
  });
  return t;
}

template <typename T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape) {
  HEED_CHECK(static_cast<int64_t>(values.size()) == shape_numel(shape),
             "from_vector: {} values for shape {}", values.size(), shape_str(shape));
  Tensor t = Tensor::empty(shape, dtype_of<T>());
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}
template Tensor from_vector<float>(const std::vector<float>&, const Shape&);
template Tensor from_vector<double>(const std::vector<double>&, const Shape&);
template Tensor from_vector<int64_t>(const std::vector<int64_t>&, const Shape&);
template Tensor from_vector<int32_t>(const std::vector<int32_t>&, const Shape&);
template Tensor from_vector<uint8_t>(const std::vector<uint8_t>&, const Shape&);

}  // namespace heed
