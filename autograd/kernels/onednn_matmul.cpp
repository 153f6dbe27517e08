#include "autograd/kernels/onednn_matmul.h"

#include <dnnl.hpp>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "autograd/error.h"

namespace heed {
namespace {

struct Runtime {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

Runtime& runtime() {
  static Runtime* instance = new Runtime();
  return *instance;
}

}  // namespace

bool onednn_bf16_matmul_available() {
  static const bool available = [] {
    try {
      const dnnl::memory::dims dims{2, 2};
      auto md = [&](dnnl::memory::data_type t) {
        return dnnl::memory::desc(dims, t, dnnl::memory::format_tag::ab);
      };
      dnnl::matmul::desc desc(md(dnnl::memory::data_type::bf16), md(dnnl::memory::data_type::bf16),
                              md(dnnl::memory::data_type::f32));
      dnnl::matmul::primitive_desc pd(desc, runtime().engine);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return available;
}

namespace {

using Key = std::vector<int64_t>;

struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t v : k) h = (h ^ static_cast<size_t>(v)) * 1099511628211ull;
    return h;
  }
};

// A primitive for one exact geometry. Where oneDNN has only its slow reference
// implementation for an operand's strides, the operand is copied to a contiguous layout
// first (the copy is far cheaper than the reference kernel).
struct Entry {
  dnnl::matmul primitive;
  bool copy_a = false, copy_b = false;
  // The descriptors the primitive was built with, so a call only wraps pointers.
  dnnl::memory::desc src, weights, dst, bias;
};

struct Cache {
  std::mutex mutex;
  std::unordered_map<Key, Entry, KeyHash> entries;
  MatmulCacheStats stats;
};

Cache& cache() {
  static Cache* instance = new Cache();
  return *instance;
}

dnnl::memory::data_type onednn_type(DType t) {
  switch (t) {
    case DType::f32:
      return dnnl::memory::data_type::f32;
    case DType::bf16:
      return dnnl::memory::data_type::bf16;
    default:
      fail("matmul: oneDNN path takes f32 or bf16, got {}", t);
  }
}

dnnl::memory::desc describe(const Shape& shape, const Shape& strides, DType t) {
  return dnnl::memory::desc(dnnl::memory::dims(shape.begin(), shape.end()), onednn_type(t),
                            dnnl::memory::dims(strides.begin(), strides.end()));
}

Shape bias_shape(int64_t nd, int64_t n) {
  Shape s(nd, 1);
  s.back() = n;
  return s;
}

// oneDNN rejects strides on size-1 dims that do not match a dense layout in some checks;
// give such dims the stride a dense tensor would have.
Shape normalized_strides(const Tensor& t) {
  Shape s = t.strides();
  const Shape dense = contiguous_strides(t.shape());
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.shape()[d] == 1) s[d] = dense[d];
  }
  return s;
}

dnnl::matmul build(const Shape& a_shape, const Shape& a_strides, const Shape& b_shape,
                   const Shape& b_strides, const Tensor& bias, const Tensor& out, DType in_type,
                   std::string* impl) {
  auto a_md = describe(a_shape, a_strides, in_type);
  auto b_md = describe(b_shape, b_strides, in_type);
  auto c_md = describe(out.shape(), out.strides(), DType::f32);
  dnnl::matmul::desc desc = [&] {
    if (bias.defined()) {
      auto bias_md = describe(bias_shape(out.dim(), out.shape().back()),
                              bias_shape(out.dim(), bias.strides().back()), DType::f32);
      return dnnl::matmul::desc(a_md, b_md, bias_md, c_md);
    }
    return dnnl::matmul::desc(a_md, b_md, c_md);
  }();
  dnnl::matmul::primitive_desc pd(desc, runtime().engine);
  *impl = pd.impl_info_str();
  return dnnl::matmul(pd);
}

}  // namespace

void onednn_matmul(const Tensor& a, const Tensor& b, const Tensor& bias, const Tensor& out) {
  const int64_t nd = out.dim();
  const Shape a_strides = normalized_strides(a), b_strides = normalized_strides(b);
  Key key;
  key.reserve(8 * nd + 4);
  key.push_back(nd);
  key.push_back(static_cast<int64_t>(a.dtype()));
  key.push_back(bias.defined() ? bias.strides().back() : -1);
  key.insert(key.end(), a.shape().begin(), a.shape().end());
  key.insert(key.end(), a_strides.begin(), a_strides.end());
  key.insert(key.end(), b.shape().begin(), b.shape().end());
  key.insert(key.end(), b_strides.begin(), b_strides.end());
  key.insert(key.end(), out.shape().begin(), out.shape().end());

  Cache& c = cache();
  Entry entry;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.entries.find(key);
    if (it != c.entries.end()) {
      entry = it->second;
      c.stats.hits++;
    } else {
      try {
        std::string impl;
        entry.primitive =
            build(a.shape(), a_strides, b.shape(), b_strides, bias, out, a.dtype(), &impl);
        if (impl.find("ref") != std::string::npos && (!a.is_contiguous() || !b.is_contiguous())) {
          entry.copy_a = !a.is_contiguous();
          entry.copy_b = !b.is_contiguous();
          entry.primitive =
              build(a.shape(), entry.copy_a ? contiguous_strides(a.shape()) : a_strides, b.shape(),
                    entry.copy_b ? contiguous_strides(b.shape()) : b_strides, bias, out, a.dtype(),
                    &impl);
        }
        const Shape& src_strides = entry.copy_a ? contiguous_strides(a.shape()) : a_strides;
        const Shape& weight_strides = entry.copy_b ? contiguous_strides(b.shape()) : b_strides;
        entry.src = describe(a.shape(), src_strides, a.dtype());
        entry.weights = describe(b.shape(), weight_strides, b.dtype());
        entry.dst = describe(out.shape(), out.strides(), DType::f32);
        if (bias.defined()) {
          entry.bias = describe(bias_shape(nd, out.shape().back()),
                                bias_shape(nd, bias.strides().back()), DType::f32);
        }
      } catch (const dnnl::error& e) {
        fail("matmul: oneDNN could not build a primitive for {} x {} ({}): {}", a.shape_str(),
             b.shape_str(), a.dtype(), e.what());
      }
      c.entries.emplace(key, entry);
      c.stats.primitives++;
    }
  }

  Tensor a_run = entry.copy_a ? a.contiguous() : a;
  Tensor b_run = entry.copy_b ? b.contiguous() : b;
  const auto& engine = runtime().engine;
  auto mem = [&](const Tensor& t, const dnnl::memory::desc& md) {
    return dnnl::memory(md, engine, t.raw_data());
  };
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, mem(a_run, entry.src)},
      {DNNL_ARG_WEIGHTS, mem(b_run, entry.weights)},
      {DNNL_ARG_DST, mem(out, entry.dst)},
  };
  if (bias.defined()) args.emplace(DNNL_ARG_BIAS, mem(bias, entry.bias));
  entry.primitive.execute(runtime().stream, args);
  runtime().stream.wait();
}

MatmulCacheStats matmul_cache_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.stats;
}

}  // namespace heed
