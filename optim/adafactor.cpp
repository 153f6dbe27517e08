#include "optim/adafactor.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/kernels/parallel.h"
#include "base/error.h"

namespace heed::optim {

namespace {

ParamGroup adafactor_defaults(const AdafactorOptions& o) {
  HEED_CHECK(!(o.relative_step && o.lr.has_value()),
             "Adafactor: lr {} given with relative_step, which sets the step size itself "
             "(min(1e-2, 1/sqrt(t))); drop one of them",
             o.lr.value_or(0.0));
  HEED_CHECK(o.relative_step || o.lr.has_value(),
             "Adafactor: lr is required without relative_step");
  ParamGroup d;
  d.lr = o.lr.value_or(0.0);
  d.weight_decay = o.weight_decay;
  d.options = {{"eps1", o.eps1},
               {"eps2", o.eps2},
               {"clip_threshold", o.clip_threshold},
               {"decay_rate", o.decay_rate},
               {"beta1", o.beta1},
               {"scale_parameter", o.scale_parameter ? 1.0 : 0.0},
               {"relative_step", o.relative_step ? 1.0 : 0.0},
               {"warmup_init", o.warmup_init ? 1.0 : 0.0}};
  return d;
}

bool is_flag(double value) {
  return value == 0.0 || value == 1.0;
}

// A parameter seen as `matrices` matrices of [rows, cols], its last two dimensions: the shape
// Adafactor factors. A vector or scalar is one row and is not factored.
struct Factoring {
  bool factored;
  int64_t matrices, rows, cols;
};

// Hugging Face's shapes of the factored state: the row state drops the last dimension, the
// column state the one before it.
Shape row_state_shape(const Shape& shape) {
  return Shape(shape.begin(), shape.end() - 1);
}

Shape col_state_shape(const Shape& shape) {
  Shape s = row_state_shape(shape);
  s.back() = shape.back();
  return s;
}

Factoring factoring_of(const Tensor& p) {
  const Shape& s = p.shape();
  if (s.size() < 2) return {false, 1, 1, p.numel()};
  const int64_t rows = s[s.size() - 2], cols = s.back();
  return {true, p.numel() / (rows * cols), rows, cols};
}

// The sum over [0, n) of term(i), in blocks whose partial sums are added in order: the same
// number on any thread count, so that a resumed run steps bit for bit as it would have.
template <typename F>
double ordered_sum(int64_t n, int64_t cost, F&& term) {
  constexpr int64_t kBlock = 4096;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> partial(static_cast<size_t>(blocks), 0.0);
  parallel_for(blocks, kBlock * cost, [&](int64_t b) {
    double s = 0.0;
    for (int64_t i = b * kBlock, end = std::min(n, (b + 1) * kBlock); i < end; ++i) s += term(i);
    partial[static_cast<size_t>(b)] = s;
  });
  double total = 0.0;
  for (double s : partial) total += s;
  return total;
}

// The scalars of one update, from the group's hyper-parameters and the update count t.
struct StepScalars {
  double step;   // the step size, parameter scale included
  double beta2;  // 1 - t^decay_rate
};

StepScalars step_scalars(const ParamGroup& group, double t, double param_rms) {
  double step = *group.lr;
  if (group.option("relative_step") != 0.0) {
    const double min_step = group.option("warmup_init") != 0.0 ? 1e-6 * t : 1e-2;
    step = std::min(min_step, 1.0 / std::sqrt(t));
  }
  if (group.option("scale_parameter") != 0.0) step *= std::max(group.option("eps2"), param_rms);
  return {step, 1.0 - std::pow(t, group.option("decay_rate"))};
}

// The second-moment factors of a factored parameter: its state R [matrices, rows] and C
// [matrices, cols] moved towards this gradient's row and column means of g^2 + eps1, then the
// per-row and per-column multipliers of the update, 1/sqrt(R / mean(R)) and 1/sqrt(C).
template <typename T>
void factored_second_moment(const Factoring& f, const T* g, T grad_scale, double eps1, double beta2,
                            T* row_state, T* col_state, std::vector<T>& row_factor,
                            std::vector<T>& col_factor) {
  const int64_t rows = f.rows, cols = f.cols, all_rows = f.matrices * rows;
  const auto u = [&](int64_t i) {
    const T gi = g[i] * grad_scale;
    return static_cast<double>(gi * gi) + eps1;
  };
  parallel_for(all_rows, cols, [&](int64_t r) {
    double s = 0.0;
    for (int64_t c = 0; c < cols; ++c) s += u(r * cols + c);
    row_state[r] = static_cast<T>(beta2 * row_state[r] + (1.0 - beta2) * (s / cols));
  });
  // Columns in blocks, each summed down its rows in order: no thread shares an accumulator.
  constexpr int64_t kColumns = 64;
  const int64_t blocks = (cols + kColumns - 1) / kColumns;
  parallel_for(f.matrices * blocks, rows * kColumns, [&](int64_t job) {
    const int64_t m = job / blocks, c0 = (job % blocks) * kColumns;
    const int64_t c1 = std::min(cols, c0 + kColumns);
    double sums[kColumns] = {};
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t base = (m * rows + r) * cols;
      for (int64_t c = c0; c < c1; ++c) sums[c - c0] += u(base + c);
    }
    for (int64_t c = c0; c < c1; ++c) {
      T& state = col_state[m * cols + c];
      state = static_cast<T>(beta2 * state + (1.0 - beta2) * (sums[c - c0] / rows));
    }
  });
  row_factor.resize(static_cast<size_t>(all_rows));
  col_factor.resize(static_cast<size_t>(f.matrices * cols));
  for (int64_t m = 0; m < f.matrices; ++m) {
    double row_sum = 0.0;
    for (int64_t r = 0; r < rows; ++r) row_sum += row_state[m * rows + r];
    const T row_mean = static_cast<T>(row_sum / rows);
    for (int64_t r = 0; r < rows; ++r) {
      row_factor[m * rows + r] = T(1) / std::sqrt(row_state[m * rows + r] / row_mean);
    }
    for (int64_t c = 0; c < cols; ++c) {
      col_factor[m * cols + c] = T(1) / std::sqrt(col_state[m * cols + c]);
    }
  }
}

template <typename T>
void adafactor_update(const ParamGroup& group, const Tensor& param, const Tensor& grad,
                      double grad_scale_in, ParamState& state) {
  const int64_t n = param.numel();
  if (n == 0) return;
  const Factoring f = factoring_of(param);
  T* p = param.data<T>();
  const T* g = grad.data<T>();
  const T grad_scale = static_cast<T>(grad_scale_in);
  auto slot = [&](const char* name, Shape shape) -> T* {
    Tensor& s = state.tensors[name];
    if (!s.defined()) s = zeros(shape, param.dtype());
    return s.data<T>();
  };

  double param_rms = 0.0;
  if (group.option("scale_parameter") != 0.0) {
    param_rms = std::sqrt(ordered_sum(n, 1,
                                      [&](int64_t i) {
                                        const double v = p[i];
                                        return v * v;
                                      }) /
                          static_cast<double>(n));
  }
  const StepScalars s = step_scalars(group, static_cast<double>(state.step), param_rms);
  const double eps1 = group.option("eps1");

  // The unclipped update d before the step size, element i, and after that the sum of d^2.
  std::vector<T> row_factor, col_factor;
  T* v = nullptr;
  if (f.factored) {
    factored_second_moment(
        f, g, grad_scale, eps1, s.beta2, slot("exp_avg_sq_row", row_state_shape(param.shape())),
        slot("exp_avg_sq_col", col_state_shape(param.shape())), row_factor, col_factor);
  } else {
    v = slot("exp_avg_sq", param.shape());
    const T beta2 = static_cast<T>(s.beta2), one_minus_beta2 = static_cast<T>(1.0 - s.beta2);
    const T e = static_cast<T>(eps1);
    parallel_for((n + 4095) / 4096, 4096, [&](int64_t b) {
      for (int64_t i = b * 4096, end = std::min(n, (b + 1) * 4096); i < end; ++i) {
        const T gi = g[i] * grad_scale;
        v[i] = beta2 * v[i] + one_minus_beta2 * (gi * gi + e);
      }
    });
  }
  const int64_t cols = f.cols, rows = f.rows;
  const auto direction = [&](int64_t i) -> T {
    const T gi = g[i] * grad_scale;
    if (!f.factored) return gi * (T(1) / std::sqrt(v[i]));
    const int64_t row = i / cols, matrix = row / rows;
    return gi * row_factor[row] * col_factor[matrix * cols + i % cols];
  };
  const double rms = std::sqrt(ordered_sum(n, 4,
                                           [&](int64_t i) {
                                             const double d = direction(i);
                                             return d * d;
                                           }) /
                               static_cast<double>(n));
  const double clip = std::max(1.0, rms / group.option("clip_threshold"));
  const T scale = static_cast<T>(s.step / clip);

  const double beta1 = group.option("beta1");
  T* m = beta1 > 0.0 ? slot("exp_avg", param.shape()) : nullptr;
  const T b1 = static_cast<T>(beta1), one_minus_b1 = static_cast<T>(1.0 - beta1);
  const T decay = static_cast<T>(-*group.weight_decay * s.step);
  parallel_for((n + 4095) / 4096, 4096 * 4, [&](int64_t b) {
    for (int64_t i = b * 4096, end = std::min(n, (b + 1) * 4096); i < end; ++i) {
      T d = direction(i) * scale;
      if (m) {
        m[i] = b1 * m[i] + one_minus_b1 * d;
        d = m[i];
      }
      const T pi = p[i] + decay * p[i];
      p[i] = pi - d;
    }
  });
}

}  // namespace

Adafactor::Adafactor(std::vector<ParamGroup> groups, const AdafactorOptions& defaults)
    : Optimizer(std::move(groups), adafactor_defaults(defaults)) {
  check_all_groups();
}

Adafactor::Adafactor(NamedTensors params, const AdafactorOptions& defaults)
    : Adafactor(std::vector<ParamGroup>{ParamGroup{std::move(params), {}, {}, {}}}, defaults) {}

void Adafactor::check_hyper_parameters(const ParamGroup& group, const std::string& where) const {
  const bool relative = group.option("relative_step") != 0.0;
  HEED_CHECK(!relative || *group.lr == 0.0,
             "Adafactor {}: lr {} with relative_step, which sets the step size itself", where,
             *group.lr);
  HEED_CHECK(*group.lr >= 0.0, "Adafactor {}: lr must be >= 0, got {}", where, *group.lr);
  HEED_CHECK(*group.weight_decay >= 0.0, "Adafactor {}: weight_decay must be >= 0, got {}", where,
             *group.weight_decay);
  HEED_CHECK(group.option("eps1") >= 0.0 && group.option("eps2") >= 0.0,
             "Adafactor {}: eps1 and eps2 must be >= 0, got {} and {}", where, group.option("eps1"),
             group.option("eps2"));
  HEED_CHECK(group.option("clip_threshold") > 0.0,
             "Adafactor {}: clip_threshold must be > 0, got {}", where,
             group.option("clip_threshold"));
  // t^decay_rate must fall towards 0 for beta2 to rise towards 1.
  HEED_CHECK(group.option("decay_rate") < 0.0, "Adafactor {}: decay_rate must be < 0, got {}",
             where, group.option("decay_rate"));
  HEED_CHECK(group.option("beta1") >= 0.0 && group.option("beta1") < 1.0,
             "Adafactor {}: beta1 must be in [0, 1), got {}", where, group.option("beta1"));
  for (const char* flag : {"scale_parameter", "relative_step", "warmup_init"}) {
    HEED_CHECK(is_flag(group.option(flag)), "Adafactor {}: {} must be 0 or 1, got {}", where, flag,
               group.option(flag));
  }
}

std::vector<std::string> Adafactor::state_names(const ParamGroup& group,
                                                const Tensor& param) const {
  std::vector<std::string> names;
  if (factoring_of(param).factored) {
    names = {"exp_avg_sq_row", "exp_avg_sq_col"};
  } else {
    names = {"exp_avg_sq"};
  }
  if (group.option("beta1") > 0.0) names.push_back("exp_avg");
  return names;
}

Shape Adafactor::state_shape(const std::string& slot, const Tensor& param) const {
  if (!factoring_of(param).factored) return param.shape();
  if (slot == "exp_avg_sq_row") return row_state_shape(param.shape());
  if (slot == "exp_avg_sq_col") return col_state_shape(param.shape());
  return param.shape();
}

void Adafactor::update(const ParamGroup& group, const Tensor& param, const Tensor& grad,
                       double grad_scale, ParamState& state) {
  if (param.dtype() == DType::f64) {
    adafactor_update<double>(group, param, grad, grad_scale, state);
  } else {
    adafactor_update<float>(group, param, grad, grad_scale, state);
  }
}

}  // namespace heed::optim
