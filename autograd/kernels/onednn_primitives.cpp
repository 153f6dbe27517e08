#include "autograd/kernels/onednn_primitives.h"

#include <string>
#include <unordered_map>

namespace heed {

OnednnRuntime& onednn_runtime() {
  static OnednnRuntime* instance = new OnednnRuntime();
  return *instance;
}

ProductCache& product_cache() {
  static ProductCache* instance = new ProductCache();
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

dnnl::memory::desc describe_memory(const Shape& shape, const Shape& strides, DType t) {
  return dnnl::memory::desc(dnnl::memory::dims(shape.begin(), shape.end()), onednn_type(t),
                            dnnl::memory::dims(strides.begin(), strides.end()));
}

Shape bias_shape(int64_t nd, int64_t n) {
  Shape s(nd, 1);
  s.back() = n;
  return s;
}

Shape normalized_strides(const Tensor& t) {
  Shape s = t.strides();
  const Shape dense = contiguous_strides(t.shape());
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.shape()[d] == 1) s[d] = dense[d];
  }
  return s;
}

dnnl::matmul::primitive_desc describe_product(const dnnl::memory::desc& a_md,
                                              const dnnl::memory::desc& b_md, const Tensor& bias,
                                              const Tensor& out, const Shape& out_strides,
                                              bool piece) {
  dnnl::primitive_attr attr;
  if (piece) attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  auto c_md = describe_memory(out.shape(), out_strides, DType::f32);
  dnnl::matmul::desc desc = [&] {
    if (bias.defined()) {
      auto bias_md = describe_memory(bias_shape(out.dim(), out.shape().back()),
                                     bias_shape(out.dim(), bias.strides().back()), DType::f32);
      return dnnl::matmul::desc(a_md, b_md, bias_md, c_md);
    }
    return dnnl::matmul::desc(a_md, b_md, c_md);
  }();
  return dnnl::matmul::primitive_desc(desc, attr, onednn_runtime().engine);
}

namespace {

dnnl::matmul build(const Shape& a_shape, const Shape& a_strides, const Shape& b_shape,
                   const Shape& b_strides, const Tensor& bias, const Tensor& out,
                   const Shape& out_strides, DType in_type, bool piece, std::string* impl,
                   dnnl::memory::desc* scratchpad) {
  auto pd =
      describe_product(describe_memory(a_shape, a_strides, in_type),
                       describe_memory(b_shape, b_strides, in_type), bias, out, out_strides, piece);
  *impl = pd.impl_info_str();
  if (piece) *scratchpad = pd.scratchpad_desc();
  return dnnl::matmul(pd);
}

}  // namespace

ProductEntry build_plain_product(const Tensor& a, const Shape& a_strides, const Tensor& b,
                                 const Shape& b_strides, const Tensor& bias, const Tensor& out,
                                 bool piece) {
  ProductEntry entry;
  std::string impl;
  entry.primitive = build(a.shape(), a_strides, b.shape(), b_strides, bias, out,
                          normalized_strides(out), a.dtype(), piece, &impl, &entry.scratchpad);
  if (impl.find("ref") != std::string::npos &&
      (!a.is_contiguous() || !b.is_contiguous() || !out.is_contiguous())) {
    entry.copy_a = !a.is_contiguous();
    entry.copy_b = !b.is_contiguous();
    entry.copy_out = !out.is_contiguous();
    entry.primitive =
        build(a.shape(), entry.copy_a ? contiguous_strides(a.shape()) : a_strides, b.shape(),
              entry.copy_b ? contiguous_strides(b.shape()) : b_strides, bias, out,
              contiguous_strides(out.shape()), a.dtype(), piece, &impl, &entry.scratchpad);
  }
  const Shape& src_strides = entry.copy_a ? contiguous_strides(a.shape()) : a_strides;
  const Shape& weight_strides = entry.copy_b ? contiguous_strides(b.shape()) : b_strides;
  entry.src = describe_memory(a.shape(), src_strides, a.dtype());
  entry.weights = describe_memory(b.shape(), weight_strides, b.dtype());
  entry.dst = describe_memory(
      out.shape(), entry.copy_out ? contiguous_strides(out.shape()) : normalized_strides(out),
      DType::f32);
  if (bias.defined()) {
    entry.bias = describe_memory(bias_shape(out.dim(), out.shape().back()),
                                 bias_shape(out.dim(), bias.strides().back()), DType::f32);
  }
  return entry;
}

PrimitiveKey product_key(bool packed, const Tensor& a, const Shape& a_strides, const Tensor& b,
                         const Shape& b_strides, const Tensor& bias, const Tensor& out,
                         bool piece) {
  PrimitiveKey key;
  key.reserve(9 * out.dim() + 6);
  key.push_back(out.dim());
  key.push_back(packed);
  key.push_back(piece);
  key.push_back(static_cast<int64_t>(a.dtype()));
  key.push_back(static_cast<int64_t>(b.dtype()));
  key.push_back(bias.defined() ? bias.strides().back() : -1);
  key.insert(key.end(), a.shape().begin(), a.shape().end());
  key.insert(key.end(), a_strides.begin(), a_strides.end());
  key.insert(key.end(), b.shape().begin(), b.shape().end());
  key.insert(key.end(), b_strides.begin(), b_strides.end());
  key.insert(key.end(), out.shape().begin(), out.shape().end());
  const Shape out_strides = normalized_strides(out);
  key.insert(key.end(), out_strides.begin(), out_strides.end());
  return key;
}

void execute_product(const ProductEntry& entry, const Tensor& a, const Tensor& b,
                     const Tensor& bias, const Tensor& out, dnnl::stream& stream,
                     const Tensor& scratchpad) {
  const auto& engine = onednn_runtime().engine;
  auto mem = [&](const Tensor& t, const dnnl::memory::desc& md) {
    return dnnl::memory(md, engine, t.raw_data());
  };
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, mem(a, entry.src)},
      {DNNL_ARG_WEIGHTS, mem(b, entry.weights)},
      {DNNL_ARG_DST, mem(out, entry.dst)},
  };
  if (bias.defined()) args.emplace(DNNL_ARG_BIAS, mem(bias, entry.bias));
  if (scratchpad.defined()) args.emplace(DNNL_ARG_SCRATCHPAD, mem(scratchpad, entry.scratchpad));
  entry.primitive.execute(stream, args);
  stream.wait();
}

}  // namespace heed
