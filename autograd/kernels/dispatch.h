#pragma once
// Runs a templated lambda for a tensor's floating dtype: f32 is the fast path, f64 the
// reference path that gradient checks use.
#include <cstdint>

#include "base/dtype.h"
#include "base/error.h"

namespace heed {

template <typename F>
decltype(auto) dispatch_float(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::f32:
      return f.template operator()<float>();
    case DType::f64:
      return f.template operator()<double>();
    default:
      fail("{}: expected a floating tensor (f32 or f64), got {}", op, dtype);
  }
}

template <typename F>
decltype(auto) dispatch_all(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::f32:
      return f.template operator()<float>();
    case DType::f64:
      return f.template operator()<double>();
    case DType::bf16:
      return f.template operator()<bf16>();
    case DType::i32:
      return f.template operator()<int32_t>();
    case DType::i64:
      return f.template operator()<int64_t>();
    case DType::u8:
      return f.template operator()<uint8_t>();
  }
  fail("{}: unknown dtype", op);
}

template <typename T>
inline double to_double(T v) {
  if constexpr (std::is_same_v<T, bf16>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

template <typename T>
inline T from_double(double v) {
  if constexpr (std::is_same_v<T, bf16>) {
    return bf16(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace heed
