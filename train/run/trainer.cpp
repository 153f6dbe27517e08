#include "train/run/trainer.h"

#include "train/run/due.h"
#include "train/run/run_checkpoints.h"
#include "train/run/run_end.h"
#include "train/run/run_setup.h"
#include "train/run/step_log.h"
#include "train/run/stop_signals.h"
#include "train/run/train_step.h"

namespace heed::train {
namespace {

// The run as llm.c writes its loop: set up (or resume), then one optimizer step at a time and
// whatever is due after it, until the last step, a stop signal or a non-finite loss. The work
// is in the pieces it wires together: run_setup, train_step, step_log, due, run_checkpoints,
// run_end.
class Run {
 public:
  Run(const RunConfig& config, const TrainerHooks& hooks)
      : run_(config, World::get()), hooks_(hooks) {}

  TrainerResult execute() {
    set_up_run(run_);
    std::optional<TrainingState> resumed;
    if (run_.config.train.resume == Resume::kAuto) resumed = resume_run(run_, progress_);
    start_data_parallel(run_, resumed);
    if (run_.world.is_main()) run_.report.emplace(run_.config, *run_.model, run_.log);
    run_.write_report("running");
    StopSignals::run_begins();
    try {
      return train_loop();
    } catch (...) {
      run_.write_report("stopped");
      throw;
    }
  }

 private:
  TrainerResult train_loop() {
    result_.last_checkpoint = progress_.resumed_from;  // until this run writes one
    run_.model->train();
    progress_.start = RunProgress::Clock::now();
    progress_.first_step = progress_.step;
    step_log_.start();
    while (progress_.step < run_.config.train.max_steps) {
      const double lr = run_.scheduler->last_lr().at(0);
      const StepOutcome o = run_step();
      if (o.nonfinite_loss) return stop_on_nonfinite_loss(o);
      if (!o.updated) {
        skipped_without_targets(o);
        continue;
      }
      consecutive_skips_ = 0;
      const Due due = due_after(progress_.step, run_.config, run_.data.valid != nullptr);
      step_log_.after_step(run_, progress_, o, lr, due.log);
      const bool new_best = run_.world.any(evaluate_if_due(due));  // rank 0 alone evaluates
      const bool saved = due.checkpoint || new_best;
      if (saved) result_.last_checkpoint = save_run_checkpoint(run_, progress_);
      if (hooks_.after_step) hooks_.after_step(progress_.step);
      // A signal to any rank stops the whole job, after the same step everywhere.
      if (const int signal = run_.world.max(StopSignals::received()); signal != 0) {
        return stop_on_signal(signal, saved);
      }
    }
    return finish();
  }

  StepOutcome run_step() {
    const auto next_batch = [this] {
      return run_.parallel ? run_.parallel->rows(run_.loader->next()) : run_.loader->next();
    };
    const TrainConfig& t = run_.config.train;
    StepOutcome o = train_step(run_.task, *run_.model, *run_.optimizer, next_batch,
                               {.grad_accum_steps = t.grad_accum_steps,
                                .max_grad_norm = t.max_grad_norm,
                                .label_smoothing = t.label_smoothing,
                                .sync = run_.parallel.get()});
    progress_.tokens_seen += o.tokens;
    if (o.nonfinite_loss || !o.updated) return o;  // nothing changed: the step did not happen
    run_.scheduler->step();
    ++progress_.step;
    return o;
  }

  // Evaluates data.valid when due, on rank 0; returns whether the model is the best so far.
  bool evaluate_if_due(const Due& due) {
    if (!run_.world.is_main() || !due.evaluate) return false;
    Metrics m = evaluate_and_log(run_, progress_, "valid", run_.data.valid);
    bool new_best = false;
    if (run_.best && run_.best->consider(m, progress_.step)) {
      new_best = true;
      run_.log(fmt::format("best so far by valid {}: {:.6g} at step {}", run_.best->metric(),
                           run_.best->value(), progress_.step));
    }
    if (due.last) progress_.last_valid = std::move(m);
    return new_best;
  }

  // A batch without a labelled position teaches nothing: its step is not counted, and training
  // goes on with the next batch. Data that never has one would loop for ever, so it stops.
  void skipped_without_targets(const StepOutcome& o) {
    run_.log(fmt::format(
        "step {}: {} micro-batch{} without a labelled position (no target token); skipped, no "
        "update",
        progress_.step + 1, o.skipped_micro_batches, o.skipped_micro_batches == 1 ? "" : "es"));
    if (++consecutive_skips_ >= kMaxConsecutiveSkips) {
      fail(
          "{} batches in a row had no labelled position: the training data ({}) gives the task "
          "nothing to learn",
          consecutive_skips_, run_.config.data.train);
    }
  }

  TrainerResult stop_on_nonfinite_loss(const StepOutcome& o) {
    run_.log(fmt::format("stopping: the loss is {} at step {} (micro-batch {}); {}",
                         *o.nonfinite_loss, progress_.step + 1, o.nonfinite_micro,
                         resumable_state(run_.config)));
    run_.write_report("stopped");
    result_.exit_code = 1;
    result_.steps = progress_.step;
    return result_;
  }

  TrainerResult stop_on_signal(int signal, bool saved) {
    run_.log(fmt::format("received signal {}: saving a checkpoint at step {} and stopping", signal,
                         progress_.step));
    if (!saved) result_.last_checkpoint = save_run_checkpoint(run_, progress_);
    run_.write_report("stopped");
    result_.steps = progress_.step;
    return result_;
  }

  TrainerResult finish() {
    result_.steps = progress_.step;
    if (run_.world.is_main()) {  // rank 0 evaluates and reports for the job
      finish_run_on_main(run_, progress_, result_.last_checkpoint, result_.final_metrics);
    }
    // Every rank returns once the job's files are written: a pipeline's next stage reads them.
    run_.world.barrier();
    return result_;
  }

  static constexpr int64_t kMaxConsecutiveSkips = 100;
  RunParts run_;
  TrainerHooks hooks_;
  RunProgress progress_;
  StepLog step_log_;
  TrainerResult result_;
  int64_t consecutive_skips_ = 0;
};

}  // namespace

TrainerResult run_training(const RunConfig& config, const TrainerHooks& hooks) {
  return Run(config, hooks).execute();
}

}  // namespace heed::train
