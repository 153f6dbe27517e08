// embedding: rows of a [V, C] table picked by integer ids.
#include <omp.h>

#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/parallel.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "base/profile.h"

namespace heed {
namespace {

// Reads ids of either integer dtype as int64.
std::vector<int64_t> read_ids(const Tensor& ids) {
  HEED_CHECK(ids.dtype() == DType::i64 || ids.dtype() == DType::i32,
             "embedding: ids must be i64 or i32, got {} {}", ids.dtype(), ids.shape_str());
  return ids.to_vector<int64_t>();
}

struct EmbeddingBackward : Node {
  std::vector<int64_t> ids;
  int64_t vocab = 0, width = 0, padding_idx = -1;
  DType dtype = DType::f32;
  const char* name() const override { return "EmbeddingBackward"; }
  std::vector<Tensor> backward(const Tensor& g_in) override;
};

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& ids, int64_t padding_idx) {
  OpTimer timer("embedding");
  HEED_CHECK(weight.dim() == 2, "embedding: weight must be [vocab, width], got {}",
             weight.shape_str());
  const int64_t vocab = weight.size(0), width = weight.size(1);
  std::vector<int64_t> id_values = read_ids(ids);
  for (int64_t id : id_values) {
    HEED_CHECK(id >= 0 && id < vocab, "embedding: id {} out of range for a vocabulary of {}", id,
               vocab);
  }
  Shape out_shape = ids.shape();
  out_shape.push_back(width);
  Tensor out = Tensor::empty(out_shape, weight.dtype());
  Tensor w = weight.contiguous();
  dispatch_float(weight.dtype(), "embedding", [&]<typename T>() {
    const T* wp = w.data<T>();
    T* o = out.data<T>();
    parallel_for(static_cast<int64_t>(id_values.size()), width, [&](int64_t i) {
      std::copy(wp + id_values[i] * width, wp + (id_values[i] + 1) * width, o + i * width);
    });
  });
  if (needs_grad({&weight})) {
    auto node = std::make_shared<EmbeddingBackward>();
    node->ids = std::move(id_values);
    node->vocab = vocab;
    node->width = width;
    node->padding_idx = padding_idx;
    node->dtype = weight.dtype();
    attach_node(out, node, {weight});
  }
  return out;
}

std::vector<Tensor> EmbeddingBackward::backward(const Tensor& g_in) {
  Tensor g = g_in.contiguous();
  Tensor gw = zeros({vocab, width}, dtype);
  dispatch_float(dtype, "embedding backward", [&]<typename T>() {
    const T* gp = g.data<T>();
    T* w = gw.data<T>();
    const int64_t n = static_cast<int64_t>(ids.size());
    // Each thread owns the rows whose id falls in its residue class: no two threads ever
    // add into the same row, so there is no race and no atomics.
#pragma omp parallel if (n * width > kParallelGrain)
    {
      const int64_t threads = omp_get_num_threads(), me = omp_get_thread_num();
      for (int64_t i = 0; i < n; ++i) {
        const int64_t id = ids[i];
        if (id == padding_idx || id % threads != me) continue;
        T* row = w + id * width;
        const T* src = gp + i * width;
        for (int64_t c = 0; c < width; ++c) row[c] += src[c];
      }
    }
  });
  return {gw};
}

}  // namespace heed
