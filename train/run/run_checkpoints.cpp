#include "train/run/run_checkpoints.h"

#include "io/atomic_file.h"
#include "io/json_file.h"
#include "nn/pretrained_io.h"
#include "train/checkpoint/training_checkpoint.h"
#include "train/config/resume_changes.h"
#include "train/reporting/metrics_log.h"
#include "train/run/lora_run.h"

namespace heed::train {
namespace {

// trainer_state.json of checkpoint `dir`, read by rank 0 and sent to the others, so that only
// rank 0 reads the checkpoint's files.
nlohmann::json read_state_json(const World& world, const std::string& path) {
  std::string text = world.is_main() ? io::read_json_file(path).dump() : "";
  world.broadcast(text);
  return nlohmann::json::parse(text);
}

void restore_best_model(RunParts& run, const TrainingState& state, const std::string& dir) {
  if (!run.best) return;
  if (state.best_model) {
    run.best->load_state(best_model_fields(state), dir);
  } else {
    run.log(
        fmt::format("eval.load_best_model_at_end: {} holds no best model (its run did not "
                    "choose one); choosing among the evaluations after step {}",
                    dir, state.step));
  }
}

// The weights and optimizer state (rank 0 reads them; the others get them by broadcast), and the
// schedule.
void restore_training(RunParts& run, const TrainingState& state, const std::string& dir) {
  if (run.world.is_main()) {  // the other ranks get the parameters in start_data_parallel
    nn::load_weights(*run.model, io::SafetensorsFile(dir + "/model.safetensors"));
    load_lora_weights(run.config, *run.model, dir);
    run.optimizer->load_state(dir + "/optimizer.safetensors");
  }
  if (run.parallel) run.parallel->broadcast_optimizer_state(*run.optimizer);
  run.scheduler->load_state_dict(scheduler_fields(state));
  // The schedule's saved base rate is the old one; a changed optim.lr applies from here on.
  if (run.scheduler->base_lrs().at(0) != run.config.optim.lr) {
    run.scheduler->set_base_lr(run.config.optim.lr);
  }
}

}  // namespace

std::optional<TrainingState> resume_run(RunParts& run, RunProgress& progress) {
  const RunConfig& c = run.config;
  const std::optional<std::string> dir = job_checkpoint(run.world, c.train.output_dir, run.log);
  if (!dir) {
    run.log(fmt::format("resume: no checkpoint in {}; starting from step 0", c.train.output_dir));
    // A run killed before its first checkpoint logged steps.
    if (run.world.is_main()) truncate_metrics_after(c.train.output_dir, 0);
    return std::nullopt;
  }
  const std::string path = *dir + "/trainer_state.json";
  const nlohmann::json json = read_state_json(run.world, path);
  const io::JsonFields fields(json, path);
  check_data_order(fields, c, *dir);
  if (run.world.is_main()) check_resume_changes(*dir, c, run.log);
  const TrainingState state = read_training_state(fields);
  restore_best_model(run, state, *dir);
  restore_training(run, state, *dir);
  progress.step = state.step;
  progress.tokens_seen = state.tokens_seen;
  progress.elapsed_before = state.elapsed_seconds;
  run.loader->restore(state.loader);
  run.model->dropout_generator->set_state(state.dropout_rng);
  if (run.world.is_main())
    truncate_metrics_after(c.train.output_dir, state.step, state.metrics_size);
  if (auto note = world_size_note(state, run.world.size())) run.log(*note);
  progress.resumed_from = *dir;
  run.log(fmt::format("resumed from {} at step {}", *dir, state.step));
  return state;
}

std::string save_run_checkpoint(RunParts& run, const RunProgress& progress) {
  const RunConfig& c = run.config;
  TrainingState state;
  if (run.parallel) {
    state.rank_dropout_offsets = run.parallel->dropout_offsets();
    run.parallel->gather_optimizer_state();
  }
  if (!run.world.is_main()) return {};
  state.step = progress.step;
  state.tokens_seen = progress.tokens_seen;
  state.elapsed_seconds = progress.elapsed();
  state.scheduler = run.scheduler->state_dict();
  state.loader = run.loader->state();
  state.dropout_rng = run.model->dropout_generator->state();
  state.data_order = data_order(c);
  state.task = c.task.name;
  state.metrics_size = metrics_size(c.train.output_dir);
  state.world_size = run.world.size();
  std::optional<int64_t> best_step;
  if (run.best) {
    state.best_model = run.best->state();
    if (run.best->has_value()) best_step = run.best->step();
  }
  std::string path;
  try {
    path = write_checkpoint(
        c.train.output_dir, progress.step, c.checkpoint.keep_last,
        [&](const std::string& dir) {
          nn::save_pretrained(*run.model, dir);
          save_lora_files(c, *run.model, dir);
          run.data.tokenizer->save(dir, c.data.max_seq_length, c.data.truncation);
          run.optimizer->save_state(dir + "/optimizer.safetensors");
          io::write_json_file(dir + "/trainer_state.json", to_json(state));
          io::write_file_atomically(dir + "/run_config.yaml", to_yaml(c));
        },
        best_step);
  } catch (const std::exception& e) {
    fail("{}; {} was not written, and {}", e.what(),
         checkpoint_path(c.train.output_dir, progress.step), resumable_state(c));
  }
  if (run.parallel) run.parallel->drop_others_optimizer_state();
  run.log(fmt::format("saved {}", path));
  run.write_report("running");
  return path;
}

std::string resumable_state(const RunConfig& c) {
  const std::optional<std::string> last = latest_checkpoint(c.train.output_dir);
  if (!last) return "no checkpoint was written yet; --resume starts from step 0";
  return fmt::format("the last checkpoint, {}, is intact; --resume continues from it", *last);
}

}  // namespace heed::train
