#include "train/run/step_log.h"

#include <algorithm>

#include "train/reporting/metrics_log.h"

namespace heed::train {

void StepLog::after_step(RunParts& run, const RunProgress& p, const StepOutcome& o, double lr,
                         bool record) {
  interval_.loss += o.loss;
  interval_.steps += 1;
  interval_.tokens += o.tokens;
  interval_.reduce_wait += o.reduction.wait_seconds;
  const double seconds = std::chrono::duration<double>(Clock::now() - interval_.start).count();
  const double tokens_per_s = interval_.tokens / std::max(seconds, 1e-9);
  const int64_t max_steps = run.config.train.max_steps;
  const double per_step =
      (p.elapsed() - p.elapsed_before) / std::max<int64_t>(1, p.step - p.first_step);
  run.console.step(p.step, max_steps, o.loss, lr, tokens_per_s, p.elapsed(),
                   per_step * (max_steps - p.step));
  if (!record) return;
  nlohmann::json j = {{"step", p.step},
                      {"loss", interval_.loss / interval_.steps},
                      {"lr", lr},
                      {"grad_norm", o.grad_norm},
                      {"tokens_per_second", tokens_per_s},
                      {"elapsed_seconds", p.elapsed()}};
  if (run.parallel) {  // what backward did not hide of the gradients' sums (rank 0's wait)
    j["allreduce_wait_seconds"] = interval_.reduce_wait / interval_.steps;
    j["allreduce_bytes"] = o.reduction.bytes;
  }
  if (run.world.is_main()) append_metrics_record(run.config.train.output_dir, j);
  interval_ = Interval{.start = Clock::now()};
}

}  // namespace heed::train
