#pragma once
// Adafactor (Shazeer & Stern 2018) as Hugging Face's transformers.optimization.Adafactor
// computes it, the optimizer T5 was trained with. For each parameter p with gradient g, at its
// update t = 1, 2, ...:
//
//   step  = relative_step ? min(warmup_init ? 1e-6 t : 1e-2, 1 / sqrt(t)) : lr
//   step *= scale_parameter ? max(eps2, rms(p)) : 1          (p before this update)
//   beta2 = 1 - t^decay_rate
//   u     = g^2 + eps1
//   p of two or more dimensions ("factored"), over its last two [rows, cols]:
//     R <- beta2 R + (1 - beta2) mean_cols(u)                 ([..., rows])
//     C <- beta2 C + (1 - beta2) mean_rows(u)                 ([..., cols])
//     d  = g / sqrt((R / mean(R)) C)                          (R C / sum(R): a rank-1 v)
//   otherwise: v <- beta2 v + (1 - beta2) u, d = g / sqrt(v)
//   d    /= max(1, rms(d) / clip_threshold)                   (update clipping)
//   d    *= step
//   with beta1: m <- beta1 m + (1 - beta1) d, d = m
//   p    <- p - weight_decay * step * p - d
//
// So a weight moves by a fraction of its own scale whatever its gradient's scale, and a
// [rows, cols] matrix keeps rows + cols second-moment numbers instead of rows x cols.
// Hugging Face's recipes: T5's own (relative_step, scale_parameter; lr unset) and fine-tuning
// at a fixed lr (1e-3, scale_parameter and relative_step off).
#include <optional>
#include <vector>

#include "optim/optimizer.h"

namespace heed::optim {

struct AdafactorOptions {
  // The step size when relative_step is off (then required); with relative_step it must be
  // unset, and the groups hold lr 0.
  std::optional<double> lr;
  double eps1 = 1e-30;  // added to g^2
  double eps2 = 1e-3;   // the least parameter scale that scale_parameter multiplies by
  double clip_threshold = 1.0;
  double decay_rate = -0.8;
  // A first moment only when > 0: at 0 the moving average would equal the update itself, so
  // Hugging Face's beta1=None and 0.0 step alike.
  double beta1 = 0.0;
  double weight_decay = 0.0;
  bool scale_parameter = true;
  bool relative_step = true;
  bool warmup_init = false;
};

class Adafactor : public Optimizer {
 public:
  // Group options are "eps1", "eps2", "clip_threshold", "decay_rate", "beta1",
  // "scale_parameter", "relative_step" and "warmup_init" (0 or 1).
  Adafactor(std::vector<ParamGroup> groups, const AdafactorOptions& defaults = {});
  Adafactor(NamedTensors params, const AdafactorOptions& defaults = {});

  std::string_view name() const override { return "Adafactor"; }

 protected:
  void check_hyper_parameters(const ParamGroup& group, const std::string& where) const override;
  std::vector<std::string> state_names(const ParamGroup& group, const Tensor& param) const override;
  Shape state_shape(const std::string& slot, const Tensor& param) const override;
  void update(const ParamGroup& group, const Tensor& param, const Tensor& grad, double grad_scale,
              ParamState& state) override;
};

}  // namespace heed::optim
