#include "train/run/trainer.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "base/profile.h"
#include "io/atomic_file.h"
#include "io/directory_lock.h"
#include "io/json_fields.h"
#include "io/json_file.h"
#include "nn/pretrained_io.h"
#include "optim/schedule.h"
#include "train/checkpoint/output_dir.h"
#include "train/checkpoint/training_checkpoint.h"
#include "train/config/config_origins.h"
#include "train/config/did_you_mean.h"
#include "train/config/resume_changes.h"
#include "train/distributed/data_parallel.h"
#include "train/reporting/console.h"
#include "train/reporting/metrics_log.h"
#include "train/reporting/run_report.h"
#include "train/run/best_model.h"
#include "train/run/compute_setup.h"
#include "train/run/evaluation.h"
#include "train/run/memory_estimate.h"
#include "train/run/metrics.h"
#include "train/run/stop_signals.h"
#include "train/run/task_setup.h"
#include "train/run/train_step.h"
#include "train/tasks/task.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class Run {
 public:
  Run(const RunConfig& config, const TrainerHooks& hooks)
      : c_(config),
        task_(task_for(config.task)),
        hooks_(hooks),
        console_(config.logging.progress, config.logging.every_steps, !world_.is_main()) {}

  TrainerResult execute() {
    const Log log = [this](const std::string& line) { say(line); };
    check_world(world_, c_);
    if (world_.is_main()) output_dir_lock_ = claim_output_dir(c_, log);
    set_up_compute(c_, log);
    data_ = build_data(log);
    check_same_inputs(world_, run_input_files(c_));
    if (world_.is_main()) check_memory(c_, data_, log);
    warn_of_oversubscription(c_, World::ranks_on_this_machine(), log);
    model_ = build_model(c_, data_, log);
    if (c_.eval.load_best_model_at_end) best_.emplace(best_model_for(c_, task_, data_.labels));
    build_optimizer();
    if (world_.distributed()) {
      parallel_ = std::make_unique<DataParallel>(world_, *model_, *optimizer_, c_.train);
      say(parallel_->describe(c_.train));
    }
    loader_ = std::make_unique<data::Loader>(
        data_.train, data_.collate,
        data::LoaderOptions{.batch_size = static_cast<size_t>(c_.train.batch_size),
                            .shuffle = c_.data.shuffle,
                            .group_by_length = c_.data.group_by_length,
                            .seed = static_cast<uint64_t>(c_.train.seed),
                            .prefetch = static_cast<size_t>(c_.data.prefetch)});
    if (c_.train.resume == Resume::kAuto) resume();
    if (parallel_) start_parallel();
    if (world_.is_main()) report_.emplace(c_, *model_, log);
    write_report("running");
    StopSignals::run_begins();
    try {
      return train_loop();
    } catch (...) {
      write_report("stopped");
      throw;
    }
  }

 private:
  void say(const std::string& line) { console_.say(line); }

  void write_report(const std::string& status) {
    if (report_) report_->write(status);
  }

  // Rank 0 reads the data first, writing what it builds (a vocabulary, token caches) into
  // output_dir; the other ranks then read those rather than write the same files at once.
  TaskData build_data(const Log& log) {
    if (world_.is_main()) {
      TaskData data = build_task_data(c_, log);
      world_.barrier();
      return data;
    }
    world_.barrier();
    return build_task_data(with_written_vocabulary(c_), log);
  }

  // Every rank starts from rank 0's parameters, and draws its own dropout stream.
  void start_parallel() {
    parallel_->broadcast_parameters();
    if (resumed_from_.empty()) {
      parallel_->seed_dropout(model_->dropout_generator->state(), {});
    } else {
      parallel_->seed_dropout(resumed_dropout_.dropout_rng, resumed_dropout_.rank_dropout_offsets);
    }
  }

  void build_optimizer() {
    optimizer_ = make_optimizer(c_.optim, *model_);
    std::string schedule = std::string(to_string(c_.schedule.name));
    if (schedule == "constant" && c_.schedule.warmup_steps > 0) schedule = "constant_with_warmup";
    scheduler_ = std::make_unique<optim::LRScheduler>(
        *optimizer_, optim::make_schedule(schedule, c_.schedule.warmup_steps, c_.train.max_steps));
  }

  void resume() {
    std::optional<std::string> dir =
        job_checkpoint(world_, c_.train.output_dir, [this](const std::string& l) { say(l); });
    if (!dir) {
      say(fmt::format("resume: no checkpoint in {}; starting from step 0", c_.train.output_dir));
      // A run killed before its first checkpoint logged steps.
      if (world_.is_main()) truncate_metrics_after(c_.train.output_dir, 0);
      return;
    }
    const std::string state_path = dir.value() + "/trainer_state.json";
    std::string state_text = world_.is_main() ? io::read_json_file(state_path).dump() : "";
    world_.broadcast(state_text);
    const nlohmann::json state_json = nlohmann::json::parse(state_text);
    const io::JsonFields state(state_json, state_path);  // rank 0 alone reads the checkpoint
    check_data_order(state, c_, *dir);
    if (world_.is_main()) check_resume_changes(*dir, c_, [this](const std::string& l) { say(l); });
    if (best_ && state.has("best_model")) {
      best_->load_state(state.object("best_model"), *dir);
    } else if (best_) {
      say(
          fmt::format("eval.load_best_model_at_end: {} holds no best model (its run did not "
                      "choose one); choosing among the evaluations after step {}",
                      *dir, state.int64("step")));
    }
    if (world_.is_main()) {  // the other ranks get the parameters in start_parallel
      nn::load_weights(*model_, io::SafetensorsFile(dir.value() + "/model.safetensors"));
      optimizer_->load_state(dir.value() + "/optimizer.safetensors");
    }
    if (parallel_) parallel_->broadcast_optimizer_state(*optimizer_);
    scheduler_->load_state_dict(state.object("scheduler"));
    // The schedule's saved base rate is the old one; a changed optim.lr applies from here on.
    if (scheduler_->base_lrs().at(0) != c_.optim.lr) scheduler_->set_base_lr(c_.optim.lr);
    const ResumePoint point = read_resume_point(state);
    step_ = point.step;
    tokens_seen_ = point.tokens_seen;
    elapsed_before_ = point.elapsed_seconds;
    loader_->restore(point.loader);
    model_->dropout_generator->set_state(point.dropout_rng);
    resumed_dropout_ = point;
    if (world_.is_main()) truncate_metrics_after(c_.train.output_dir, step_, point.metrics_size);
    if (auto note = world_size_note(state, world_.size())) say(*note);
    resumed_from_ = *dir;
    say(fmt::format("resumed from {} at step {}", dir.value(), step_));
  }

  std::map<std::string, double> evaluate(const std::shared_ptr<const data::Dataset>& split) {
    std::map<std::string, double> results = train::evaluate(task_, *model_, data_, split, c_);
    model_->train();
    return results;
  }

  std::map<std::string, double> evaluate_and_log(const std::string& name,
                                                 const std::shared_ptr<const data::Dataset>& split,
                                                 TrainerResult* result) {
    std::map<std::string, double> m = evaluate(split);
    nlohmann::json j = {{"step", step_}, {"split", name}};
    std::string line = fmt::format("eval {} at step {}:", name, step_);
    if (loaded_step_) {  // the best model, loaded at the end
      j["model_step"] = *loaded_step_;
      line = fmt::format("eval {} at step {} (the model of step {}):", name, step_, *loaded_step_);
    }
    for (auto& [k, v] : m) {
      j[k] = v;
      line += fmt::format(" {} {:.4f}", k, v);
    }
    append_metrics_record(c_.train.output_dir, j);
    say(line);
    write_report("running");
    if (result) result->final_metrics[name] = m;
    return m;
  }

  // Every rank calls it: a data-parallel run gathers each rank's dropout position and (ZeRO-1)
  // optimizer state onto rank 0, which alone writes. Returns the path (empty on other ranks).
  std::string save_checkpoint() {
    std::vector<uint64_t> rank_offsets;
    if (parallel_) rank_offsets = parallel_->dropout_offsets();
    OptimizerShards* shards = parallel_ ? parallel_->shards() : nullptr;
    if (shards) shards->gather_state();
    if (!world_.is_main()) return {};
    const data::LoaderState position = loader_->state();
    const Generator::State rng = model_->dropout_generator->state();
    nlohmann::json state = {{"step", step_},
                            {"tokens_seen", tokens_seen_},
                            {"elapsed_seconds", elapsed()},
                            {"scheduler", scheduler_->state_dict()},
                            {"loader", {{"epoch", position.epoch}, {"batch", position.batch}}},
                            {"dropout_rng", {{"seed", rng.seed}, {"offset", rng.offset}}},
                            {"data_order", data_order(c_)},
                            {"task", std::string(to_string(c_.task))},
                            {"metrics_size", metrics_size(c_.train.output_dir)},
                            {"world_size", world_.size()}};
    for (size_t r = 0; r < rank_offsets.size(); ++r) {
      state["dropout_rng"]["rank_offsets"][std::to_string(r)] = rank_offsets[r];
    }
    std::optional<int64_t> best_step;
    if (best_) {
      state["best_model"] = best_->state();
      if (best_->has_value()) best_step = best_->step();
    }
    std::string path;
    try {
      path = write_checkpoint(
          c_.train.output_dir, step_, c_.checkpoint.keep_last,
          [&](const std::string& dir) {
            nn::save_pretrained(*model_, dir);
            data_.tokenizer->save(dir, c_.data.max_seq_length, c_.data.truncation);
            optimizer_->save_state(dir + "/optimizer.safetensors");
            io::write_json_file(dir + "/trainer_state.json", state);
            io::write_file_atomically(dir + "/run_config.yaml", to_yaml(c_));
          },
          best_step);
    } catch (const std::exception& e) {
      fail("{}; {} was not written, and {}", e.what(), checkpoint_path(c_.train.output_dir, step_),
           resumable_state());
    }
    if (shards) shards->drop_others_state();
    say(fmt::format("saved {}", path));
    write_report("running");
    return path;
  }

  double elapsed() const {
    return elapsed_before_ + std::chrono::duration<double>(Clock::now() - start_).count();
  }

  void report_progress(double loss, double lr, double tokens_per_s) {
    const double per_step =
        (elapsed() - elapsed_before_) / std::max<int64_t>(1, step_ - first_step_);
    console_.step(step_, c_.train.max_steps, loss, lr, tokens_per_s, elapsed(),
                  per_step * (c_.train.max_steps - step_));
  }

  // The loop, as llm.c writes it: one optimizer step, then whatever is due after it.
  TrainerResult train_loop() {
    TrainerResult result;
    result.last_checkpoint = resumed_from_;  // until this run writes one
    begin_loop();
    while (step_ < c_.train.max_steps) {
      const double lr = scheduler_->last_lr().at(0);
      const StepOutcome o = run_step();
      if (o.nonfinite_loss) return stop_on_nonfinite_loss(o, result);
      if (!o.updated) {
        skipped_without_targets(o);
        continue;
      }
      consecutive_skips_ = 0;
      log_step(o, lr);
      const bool new_best = world_.any(evaluate_if_due());  // rank 0 alone evaluates
      const bool saved = checkpoint_if_due(new_best, result);
      if (hooks_.after_step) hooks_.after_step(step_);
      // A signal to any rank stops the whole job, after the same step everywhere.
      if (const int signal = world_.max(StopSignals::received()); signal != 0) {
        return stop_on_signal(signal, saved, result);
      }
    }
    return finish(result);
  }

  void begin_loop() {
    model_->train();
    start_ = interval_.start = Clock::now();
    first_step_ = step_;
  }

  StepOutcome run_step() {
    const auto next_batch = [this] {
      return parallel_ ? parallel_->rows(loader_->next()) : loader_->next();
    };
    StepOutcome o = train_step(task_, *model_, *optimizer_, next_batch,
                               {.grad_accum_steps = c_.train.grad_accum_steps,
                                .max_grad_norm = c_.train.max_grad_norm,
                                .label_smoothing = c_.train.label_smoothing,
                                .parallel = parallel_.get()});
    tokens_seen_ += o.tokens;
    if (o.nonfinite_loss || !o.updated) return o;  // nothing changed: the step did not happen
    scheduler_->step();
    ++step_;
    return o;
  }

  // A batch without a labelled position teaches nothing: its step is not counted, and training
  // goes on with the next batch. Data that never has one would loop for ever, so it stops.
  void skipped_without_targets(const StepOutcome& o) {
    say(
        fmt::format("step {}: {} micro-batch{} without a labelled position (no target token); "
                    "skipped, no update",
                    step_ + 1, o.skipped_micro_batches, o.skipped_micro_batches == 1 ? "" : "es"));
    if (++consecutive_skips_ >= kMaxConsecutiveSkips) {
      fail(
          "{} batches in a row had no labelled position: the training data ({}) gives the task "
          "nothing to learn",
          consecutive_skips_, c_.data.train);
    }
  }

  // What a stopped run leaves to resume from, for its last message.
  std::string resumable_state() const {
    const std::optional<std::string> last = latest_checkpoint(c_.train.output_dir);
    if (!last) return "no checkpoint was written yet; --resume starts from step 0";
    return fmt::format("the last checkpoint, {}, is intact; --resume continues from it", *last);
  }

  TrainerResult stop_on_nonfinite_loss(const StepOutcome& o, TrainerResult& result) {
    say(fmt::format("stopping: the loss is {} at step {} (micro-batch {}); {}", *o.nonfinite_loss,
                    step_ + 1, o.nonfinite_micro, resumable_state()));
    write_report("stopped");
    result.exit_code = 1;
    result.steps = step_;
    return result;
  }

  // The progress line or bar after every step; a metrics.jsonl record of the mean over each
  // logging interval.
  void log_step(const StepOutcome& o, double lr) {
    interval_.loss += o.loss;
    interval_.steps += 1;
    interval_.tokens += o.tokens;
    interval_.reduce_wait += o.reduction.wait_seconds;
    const double seconds = std::chrono::duration<double>(Clock::now() - interval_.start).count();
    const double tokens_per_s = interval_.tokens / std::max(seconds, 1e-9);
    report_progress(o.loss, lr, tokens_per_s);
    if (step_ % c_.logging.every_steps != 0 && step_ != c_.train.max_steps) return;
    nlohmann::json record = {{"step", step_},
                             {"loss", interval_.loss / interval_.steps},
                             {"lr", lr},
                             {"grad_norm", o.grad_norm},
                             {"tokens_per_second", tokens_per_s},
                             {"elapsed_seconds", elapsed()}};
    if (parallel_) {  // what backward did not hide of the gradients' sums (rank 0's wait)
      record["allreduce_wait_seconds"] = interval_.reduce_wait / interval_.steps;
      record["allreduce_bytes"] = o.reduction.bytes;
    }
    if (world_.is_main()) append_metrics_record(c_.train.output_dir, record);
    interval_ = Interval{.start = Clock::now()};
  }

  // Evaluates data.valid when eval.every_steps says so; returns whether the model is the best
  // so far. The final evaluation comes after the loop, except that the best model's choice
  // judges the last step too, before its checkpoint records the best.
  bool evaluate_if_due() {
    const bool last = step_ == c_.train.max_steps;
    const bool due = c_.eval.every_steps > 0 && step_ % c_.eval.every_steps == 0;
    if (!world_.is_main() || !data_.valid || !((due && !last) || (best_ && last))) return false;
    std::map<std::string, double> m = evaluate_and_log("valid", data_.valid, nullptr);
    bool new_best = false;
    if (best_ && best_->consider(m, step_)) {
      new_best = true;
      say(fmt::format("best so far by valid {}: {:.6g} at step {}", best_->metric(), best_->value(),
                      step_));
    }
    if (last) last_valid_ = std::move(m);
    return new_best;
  }

  // Saves a checkpoint every checkpoint.every_steps, at the last step and for a new best
  // model; returns whether it saved one.
  bool checkpoint_if_due(bool new_best, TrainerResult& result) {
    const bool periodic = c_.checkpoint.every_steps > 0 && step_ % c_.checkpoint.every_steps == 0;
    if (!periodic && step_ != c_.train.max_steps && !new_best) return false;
    result.last_checkpoint = save_checkpoint();
    return true;
  }

  TrainerResult stop_on_signal(int signal, bool saved, TrainerResult& result) {
    say(fmt::format("received signal {}: saving a checkpoint at step {} and stopping", signal,
                    step_));
    if (!saved) result.last_checkpoint = save_checkpoint();
    write_report("stopped");
    result.steps = step_;
    return result;
  }

  // After the last step: the best model loaded if chosen, the final evaluations,
  // final_metrics.json, the task's examples.
  TrainerResult finish(TrainerResult& result) {
    result.steps = step_;
    if (world_.is_main()) finish_on_main(result);  // rank 0 evaluates and reports for the job
    // Every rank returns once the job's files are written: a pipeline's next stage reads them.
    world_.barrier();
    return result;
  }

  void finish_on_main(TrainerResult& result) {
    std::string model_checkpoint = result.last_checkpoint;
    if (best_) model_checkpoint = load_best_model(model_checkpoint);
    if (c_.train.eval_at_end) {
      if (data_.valid && !loaded_step_ && last_valid_) {
        result.final_metrics["valid"] = *last_valid_;  // evaluated in the loop, and logged
      } else if (data_.valid) {
        evaluate_and_log("valid", data_.valid, &result);
      }
      if (data_.test) evaluate_and_log("test", data_.test, &result);
    }
    write_final_metrics(result, model_checkpoint);
    {
      NoGradGuard no_grad;
      model_->eval();
      const std::string examples = task_.end_of_run_examples(*model_, data_, c_);
      if (!examples.empty()) say(examples);
      if (!examples.empty()) report_->set_examples(examples);
    }
    write_report("finished");
    say(fmt::format("done: {} steps in {}; model in {}", step_, duration(elapsed()),
                    model_checkpoint));
    if (profiling()) say("time per op over the run (HEED_PROFILE):\n" + op_time_report());
  }

  void write_final_metrics(const TrainerResult& result, const std::string& model_checkpoint) {
    nlohmann::json j = {{"step", step_},
                        {"tokens_seen", tokens_seen_},
                        {"elapsed_seconds", elapsed()},
                        {"checkpoint", model_checkpoint}};
    if (best_) {
      j.update(best_->state());
      j["best_model_checkpoint"] = model_checkpoint;
    }
    for (auto& [split, m] : result.final_metrics) j[split] = m;
    io::write_json_file((fs::path(c_.train.output_dir) / "final_metrics.json").string(), j);
  }

  // Loads the best checkpoint's weights unless the last step's are the best; returns the
  // directory of the model now in memory (`result_checkpoint` when none was judged).
  std::string load_best_model(const std::string& result_checkpoint) {
    if (!best_->has_value()) return result_checkpoint;  // no evaluation judged (nothing was left)
    const std::string dir = checkpoint_path(c_.train.output_dir, best_->step());
    const std::string judged = fmt::format("valid {} {:.6g}", best_->metric(), best_->value());
    if (best_->step() == step_) {
      say(fmt::format("the best model is the last one ({})", judged));
      return dir;
    }
    nn::load_weights(*model_, io::SafetensorsFile(dir + "/model.safetensors"));
    loaded_step_ = best_->step();
    say(fmt::format("loaded the best model, {} ({}), for the final evaluation", dir, judged));
    return dir;
  }

  RunConfig c_;
  std::optional<io::DirectoryLock> output_dir_lock_;
  const TrainingTask& task_;
  TrainerHooks hooks_;
  const World& world_ = World::get();
  Console console_;
  std::unique_ptr<DataParallel> parallel_;  // with more than one rank
  ResumePoint resumed_dropout_;             // what a resume read, for each rank's dropout
  TaskData data_;
  std::shared_ptr<nn::PretrainedModel> model_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  std::unique_ptr<optim::LRScheduler> scheduler_;
  std::unique_ptr<data::Loader> loader_;
  int64_t step_ = 0, first_step_ = 0, tokens_seen_ = 0;
  static constexpr int64_t kMaxConsecutiveSkips = 100;
  int64_t consecutive_skips_ = 0;
  std::string resumed_from_;            // the checkpoint this run continued, if any
  std::optional<int64_t> loaded_step_;  // the best model's step, once loaded at the end
  std::optional<BestModel> best_;
  std::optional<RunReport> report_;  // report.html, from the model's build on
  std::optional<std::map<std::string, double>> last_valid_;  // the last step's, when judged
  double elapsed_before_ = 0.0;
  Clock::time_point start_;
  struct Interval {  // the steps since the last metrics.jsonl record
    double loss = 0.0, reduce_wait = 0.0;
    int64_t steps = 0, tokens = 0;
    Clock::time_point start;
  };
  Interval interval_;
};

}  // namespace

TrainerResult run_training(const RunConfig& config, const TrainerHooks& hooks) {
  return Run(config, hooks).execute();
}

}  // namespace heed::train
