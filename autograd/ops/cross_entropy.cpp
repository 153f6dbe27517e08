// Cross-entropy over logits [N, C] and class ids [N]: fused log-softmax + NLL, with
// ignore_index and label smoothing, averaged over the targets that count (PyTorch's
// reduction='mean').
#include <cmath>
#include <limits>

#include "autograd/kernels/cross_entropy_row.h"
#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/fast_math.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/row_reduce.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "base/profile.h"

namespace heed {
namespace {

struct CrossEntropyBackward : Node {
  std::vector<int64_t> targets;
  int64_t ignore_index = -100, count = 0;
  double smoothing = 0.0;
  SavedTensor logits{this}, lse{this};  // lse: each row's log-sum-exp
  const char* name() const override { return "CrossEntropyBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

}  // namespace

Tensor cross_entropy(const Tensor& logits_in, const Tensor& targets_in, int64_t ignore_index,
                     double label_smoothing) {
  OpTimer timer("cross_entropy");
  HEED_CHECK(logits_in.dim() == 2, "cross_entropy: logits must be [N, C], got {}",
             logits_in.shape_str());
  HEED_CHECK(targets_in.dim() == 1 && targets_in.size(0) == logits_in.size(0),
             "cross_entropy: targets {} do not match logits {}", targets_in.shape_str(),
             logits_in.shape_str());
  HEED_CHECK(targets_in.dtype() == DType::i64 || targets_in.dtype() == DType::i32,
             "cross_entropy: targets must be integer class ids, got {}", targets_in.dtype());
  HEED_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0,
             "cross_entropy: label_smoothing must be in [0, 1], got {}", label_smoothing);
  Tensor logits = logits_in.contiguous();
  const int64_t rows = logits.size(0), classes = logits.size(1);
  std::vector<int64_t> targets = targets_in.to_vector<int64_t>();
  int64_t count = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (targets[r] == ignore_index) continue;
    HEED_CHECK(targets[r] >= 0 && targets[r] < classes,
               "cross_entropy: target {} at row {} is out of range for {} classes", targets[r], r,
               classes);
    ++count;
  }
  Tensor lse = Tensor::empty({rows}, logits.dtype());
  double total = 0.0;
  dispatch_float(logits.dtype(), "cross_entropy", [&]<typename T>() {
    const T* x = logits.data<T>();
    T* l = lse.data<T>();
    std::vector<double> row_loss(rows, 0.0);
    parallel_for(rows, classes, [&](int64_t r) {
      const T* xr = x + r * classes;
      const T m = rows::max(xr, classes, -std::numeric_limits<T>::infinity());
      const T s = rows::sum_exp(xr, m, classes);
      const T sum_x = rows::sum(xr, classes);
      l[r] = m + std::log(s);
      if (targets[r] == ignore_index) return;
      row_loss[r] = smoothed_row_loss(l[r], xr[targets[r]], sum_x, classes, label_smoothing);
    });
    for (double v : row_loss) total += v;
  });
  // No target counts: 0/0, a NaN, exactly as PyTorch reports it.
  const double loss = count > 0 ? total / count : std::numeric_limits<double>::quiet_NaN();
  Tensor out = scalar_tensor(loss, logits.dtype());
  if (needs_grad({&logits_in})) {
    auto node = std::make_shared<CrossEntropyBackward>();
    node->targets = std::move(targets);
    node->ignore_index = ignore_index;
    node->count = count;
    node->smoothing = label_smoothing;
    node->logits.save(logits);
    node->lse.save(lse);
    attach_node(out, node, {logits_in});
  }
  return out;
}

std::vector<Tensor> CrossEntropyBackward::backward(const Tensor& g) {
  const Tensor z = logits.take(), row_lse = lse.get();
  const int64_t rows = z.size(0), classes = z.size(1);
  // The gradient has the logits' shape and each element reads only its own logit: when
  // nothing else holds the logits, it is written over them (GPT-mini's are 134 MB).
  Tensor gx = z.sole_owner() ? z : Tensor::empty(z.shape(), z.dtype());
  const double upstream = g.item();
  dispatch_float(z.dtype(), "cross_entropy backward", [&]<typename T>() {
    const T* x = z.data<T>();
    const T* l = row_lse.data<T>();
    T* o = gx.data<T>();
    const T scale = static_cast<T>(upstream / static_cast<double>(count));
    const T off = static_cast<T>(smoothing / classes);
    const T on = static_cast<T>(1.0 - smoothing);
    parallel_for(rows, classes, [&](int64_t r) {
      T* orow = o + r * classes;
      if (targets[r] == ignore_index) {
        for (int64_t c = 0; c < classes; ++c) orow[c] = 0;
        return;
      }
      const T* xr = x + r * classes;
      for (int64_t c = 0; c < classes; ++c)
        orow[c] = scale * (fast::exp_nonpositive(xr[c] - l[r]) - off);
      orow[targets[r]] -= scale * on;
    });
  });
  if (gx.storage() == z.storage()) gx.storage()->bump_version();
  return {gx};
}

}  // namespace heed
