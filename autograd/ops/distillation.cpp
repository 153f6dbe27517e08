// Knowledge distillation's two losses against a frozen teacher (Sanh et al. 2019): the
// student's softened distribution against the teacher's, and the cosine between their hidden
// states. Each is one pass over the rows forward and one backward; the teacher's side is a
// constant and gets no gradient.
#include <cmath>
#include <limits>

#include "autograd/kernels/dispatch.h"
#include "autograd/kernels/fast_math.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/row_reduce.h"
#include "autograd/node.h"
#include "autograd/ops.h"
#include "base/profile.h"

namespace heed {
namespace {

void check_pair(const char* op, const Tensor& student, const Tensor& teacher) {
  HEED_CHECK(student.dim() == 2, "{}: the student's rows must be [N, C], got {}", op,
             student.shape_str());
  HEED_CHECK(teacher.shape() == student.shape(),
             "{}: the teacher's rows {} do not match the "
             "student's {}",
             op, teacher.shape_str(), student.shape_str());
  HEED_CHECK(teacher.dtype() == student.dtype(), "{}: the teacher's rows are {}, the student's {}",
             op, teacher.dtype(), student.dtype());
  HEED_CHECK(!teacher.requires_grad(),
             "{}: the teacher's rows require a gradient; the teacher is a constant (compute it "
             "under NoGradGuard)",
             op);
}

// log-sum-exp of row / temperature.
template <typename T>
T scaled_lse(const T* row, int64_t n, T inv_t) {
  const T m = rows::max(row, n, -std::numeric_limits<T>::infinity()) * inv_t;
  return m + std::log(rows::sum_of<T>(n, [row, m, inv_t](int64_t c) {
           return fast::exp_nonpositive(row[c] * inv_t - m);
         }));
}

struct SoftTargetKlBackward : Node {
  double temperature = 1.0;
  SavedTensor student{this}, teacher{this}, lse{this};  // lse: [N, 2], student's then teacher's
  const char* name() const override { return "SoftTargetKlBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

struct CosineEmbeddingLossBackward : Node {
  SavedTensor a{this}, b{this};
  const char* name() const override { return "CosineEmbeddingLossBackward"; }
  std::vector<Tensor> backward(const Tensor& g) override;
};

// The cosine's parts of one row: a.b, |a|^2, |b|^2.
template <typename T>
struct RowCosine {
  T ab, aa, bb;
};
template <typename T>
RowCosine<T> row_cosine(const T* a, const T* b, int64_t n) {
  return {rows::dot(a, b, n), rows::dot(a, a, n), rows::dot(b, b, n)};
}
// PyTorch's cosine_similarity clamps each norm below by eps = 1e-8.
template <typename T>
T clamped_norm(T squared) {
  return std::max(std::sqrt(squared), static_cast<T>(1e-8));
}

}  // namespace

Tensor soft_target_kl(const Tensor& student_in, const Tensor& teacher_in, double temperature) {
  OpTimer timer("soft_target_kl");
  check_pair("soft_target_kl", student_in, teacher_in);
  HEED_CHECK(temperature > 0.0, "soft_target_kl: the temperature must be > 0, got {}", temperature);
  const Tensor s = student_in.contiguous(), t = teacher_in.contiguous();
  const int64_t n = s.size(0), classes = s.size(1);
  Tensor lse = Tensor::empty({n, 2}, s.dtype());
  double total = 0.0;
  dispatch_float(s.dtype(), "soft_target_kl", [&]<typename T>() {
    const T inv_t = static_cast<T>(1.0 / temperature);
    std::vector<double> row_kl(n, 0.0);
    T* l = lse.data<T>();
    parallel_for(n, 3 * classes, [&](int64_t r) {
      const T* sr = s.data<T>() + r * classes;
      const T* tr = t.data<T>() + r * classes;
      const T ls = scaled_lse(sr, classes, inv_t), lt = scaled_lse(tr, classes, inv_t);
      l[2 * r] = ls;
      l[2 * r + 1] = lt;
      // sum_c p_t (log p_t - log p_s), with log p = x / T - lse.
      row_kl[r] = static_cast<double>(rows::sum_of<T>(classes, [&](int64_t c) {
        const T log_pt = tr[c] * inv_t - lt;
        return fast::exp_nonpositive(std::min(log_pt, T(0))) * (log_pt - (sr[c] * inv_t - ls));
      }));
    });
    for (double v : row_kl) total += v;
  });
  // No rows: nothing to match, a loss of 0 (PyTorch's batchmean would divide by 0).
  const double loss = n > 0 ? total * temperature * temperature / static_cast<double>(n) : 0.0;
  Tensor out = scalar_tensor(loss, s.dtype());
  if (needs_grad({&student_in})) {
    auto node = std::make_shared<SoftTargetKlBackward>();
    node->temperature = temperature;
    node->student.save(s);
    node->teacher.save(t);
    node->lse.save(lse);
    attach_node(out, node, {student_in});
  }
  return out;
}

std::vector<Tensor> SoftTargetKlBackward::backward(const Tensor& g) {
  const Tensor s = student.get(), t = teacher.get(), l = lse.get();
  const int64_t n = s.size(0), classes = s.size(1);
  Tensor gs = Tensor::empty(s.shape(), s.dtype());
  const double upstream = g.item();
  dispatch_float(s.dtype(), "soft_target_kl backward", [&]<typename T>() {
    const T inv_t = static_cast<T>(1.0 / temperature);
    // d/ds of T^2 KL / N is T (p_s - p_t) / N.
    const T scale = static_cast<T>(upstream * temperature / static_cast<double>(n));
    parallel_for(n, 2 * classes, [&](int64_t r) {
      const T* sr = s.data<T>() + r * classes;
      const T* tr = t.data<T>() + r * classes;
      const T ls = l.data<T>()[2 * r], lt = l.data<T>()[2 * r + 1];
      T* o = gs.data<T>() + r * classes;
      for (int64_t c = 0; c < classes; ++c) {
        const T ps = fast::exp_nonpositive(std::min(sr[c] * inv_t - ls, T(0)));
        const T pt = fast::exp_nonpositive(std::min(tr[c] * inv_t - lt, T(0)));
        o[c] = scale * (ps - pt);
      }
    });
  });
  return {gs};
}

Tensor cosine_embedding_loss(const Tensor& a_in, const Tensor& b_in) {
  OpTimer timer("cosine_embedding_loss");
  check_pair("cosine_embedding_loss", a_in, b_in);
  const Tensor a = a_in.contiguous(), b = b_in.contiguous();
  const int64_t n = a.size(0), width = a.size(1);
  double total = 0.0;
  dispatch_float(a.dtype(), "cosine_embedding_loss", [&]<typename T>() {
    std::vector<double> row_loss(n, 0.0);
    parallel_for(n, 3 * width, [&](int64_t r) {
      const RowCosine<T> c = row_cosine(a.data<T>() + r * width, b.data<T>() + r * width, width);
      row_loss[r] = 1.0 - static_cast<double>(c.ab / (clamped_norm(c.aa) * clamped_norm(c.bb)));
    });
    for (double v : row_loss) total += v;
  });
  Tensor out = scalar_tensor(n > 0 ? total / static_cast<double>(n) : 0.0, a.dtype());
  if (needs_grad({&a_in})) {
    auto node = std::make_shared<CosineEmbeddingLossBackward>();
    node->a.save(a);
    node->b.save(b);
    attach_node(out, node, {a_in});
  }
  return out;
}

std::vector<Tensor> CosineEmbeddingLossBackward::backward(const Tensor& g) {
  const Tensor x = a.get(), y = b.get();
  const int64_t n = x.size(0), width = x.size(1);
  Tensor gx = Tensor::empty(x.shape(), x.dtype());
  const double upstream = g.item();
  dispatch_float(x.dtype(), "cosine_embedding_loss backward", [&]<typename T>() {
    const T scale = static_cast<T>(-upstream / static_cast<double>(n));
    parallel_for(n, 4 * width, [&](int64_t r) {
      const T* xr = x.data<T>() + r * width;
      const T* yr = y.data<T>() + r * width;
      T* o = gx.data<T>() + r * width;
      const RowCosine<T> c = row_cosine(xr, yr, width);
      const T na = clamped_norm(c.aa), nb = clamped_norm(c.bb);
      // d cos / d a = b / (|a||b|) - cos a / |a|^2, where |a| is not clamped; a clamped norm
      // is a constant, so its term drops.
      const T cos = c.ab / (na * nb);
      const T along_a = std::sqrt(c.aa) > static_cast<T>(1e-8) ? cos / c.aa : T(0);
      for (int64_t k = 0; k < width; ++k) o[k] = scale * (yr[k] / (na * nb) - along_a * xr[k]);
    });
  });
  return {gx};
}

}  // namespace heed
