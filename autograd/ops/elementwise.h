#pragma once
// Internal helpers for elementwise kernels: apply a scalar function over one, two or three
// tensors (broadcast together) into a fresh contiguous result. The lambdas are templated on
// the element type, so one definition serves the f32 and f64 paths.
#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/strided_loop.h"
#include "autograd/tensor.h"

namespace heed {

template <typename F>
Tensor map1(const Tensor& a, const char* op, F f) {
  Tensor out = Tensor::empty(a.shape(), a.dtype());
  dispatch_float(a.dtype(), op, [&]<typename T>() {
    T* o = out.data<T>();
    const T* x = a.data<T>();
    strided_loop<2>(a.shape(), {out.strides(), a.strides()}, [&](auto base, int64_t n, auto step) {
      T* op_ = o + base[0];
      const T* xp = x + base[1];
      if (step[1] == 1) {
        for (int64_t i = 0; i < n; ++i) op_[i] = f(xp[i]);
      } else {
        for (int64_t i = 0; i < n; ++i) op_[i] = f(xp[i * step[1]]);
      }
    });
  });
  return out;
}

inline void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  HEED_CHECK(a.dtype() == b.dtype(), "{}: dtypes differ: {} {} and {} {}", op, a.dtype(),
             a.shape_str(), b.dtype(), b.shape_str());
}

// Where a backward may write its result: over the incoming gradient when nothing else holds
// it (the engine handed over its last handle) and it is dense with `shape`, else a new
// tensor. Writing over it saves an allocation and the cache misses of fresh memory. Ask
// before taking any other handle on `g`.
inline Tensor reusable_gradient(const Tensor& g, const Shape& shape) {
  if (g.sole_owner() && g.is_contiguous() && g.shape() == shape) return g;
  return Tensor::empty(shape, g.dtype());
}

// f over a and b broadcast together, into a new tensor or into `into` (of the broadcast
// shape, contiguous; it may be a or b itself, since each element is read before it is written).
template <typename F>
Tensor map2(const Tensor& a, const Tensor& b, const char* op, F f, Tensor into = Tensor()) {
  check_same_dtype(a, b, op);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), op);
  Tensor out = into.defined() ? into : Tensor::empty(shape, a.dtype());
  dispatch_float(a.dtype(), op, [&]<typename T>() {
    T* o = out.data<T>();
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    strided_loop<3>(shape,
                    {out.strides(), broadcast_strides(a, shape), broadcast_strides(b, shape)},
                    [&](auto base, int64_t n, auto step) {
                      T* op_ = o + base[0];
                      const T* xp = x + base[1];
                      const T* yp = y + base[2];
                      if (step[1] == 1 && step[2] == 1) {
                        for (int64_t i = 0; i < n; ++i) op_[i] = f(xp[i], yp[i]);
                      } else if (step[1] == 1 && step[2] == 0) {
                        const T yv = *yp;
                        for (int64_t i = 0; i < n; ++i) op_[i] = f(xp[i], yv);
                      } else {
                        for (int64_t i = 0; i < n; ++i)
                          op_[i] = f(xp[i * step[1]], yp[i * step[2]]);
                      }
                    });
  });
  return out;
}

template <typename F>
Tensor map3(const Tensor& a, const Tensor& b, const Tensor& c, const char* op, F f) {
  check_same_dtype(a, b, op);
  check_same_dtype(a, c, op);
  const Shape shape = broadcast_shapes(broadcast_shapes(a.shape(), b.shape(), op), c.shape(), op);
  Tensor out = Tensor::empty(shape, a.dtype());
  dispatch_float(a.dtype(), op, [&]<typename T>() {
    T* o = out.data<T>();
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    const T* z = c.data<T>();
    strided_loop<4>(shape,
                    {out.strides(), broadcast_strides(a, shape), broadcast_strides(b, shape),
                     broadcast_strides(c, shape)},
                    [&](auto base, int64_t n, auto step) {
                      for (int64_t i = 0; i < n; ++i) {
                        o[base[0] + i] = f(x[base[1] + i * step[1]], y[base[2] + i * step[2]],
                                           z[base[3] + i * step[3]]);
                      }
                    });
  });
  return out;
}

}  // namespace heed
