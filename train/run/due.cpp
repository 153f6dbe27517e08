#include "train/run/due.h"

namespace heed::train {
namespace {

bool every(int64_t step, int64_t period) {
  return period > 0 && step % period == 0;
}

}  // namespace

Due due_after(int64_t step, const RunConfig& c, bool has_valid) {
  Due due;
  due.last = step == c.train.max_steps;
  due.log = step % c.logging.every_steps == 0 || due.last;
  // The final evaluation comes after the loop, except that the best model's choice judges the
  // last step too, before its checkpoint records the best.
  const bool periodic_eval = every(step, c.eval.every_steps) && !due.last;
  due.evaluate = has_valid && (periodic_eval || (c.eval.load_best_model_at_end && due.last));
  due.checkpoint = every(step, c.checkpoint.every_steps) || due.last;
  return due;
}

}  // namespace heed::train
