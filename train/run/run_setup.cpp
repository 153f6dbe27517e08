#include "train/run/run_setup.h"

#include "nn/lora.h"
#include "train/checkpoint/output_dir.h"
#include "train/run/compute_setup.h"
#include "train/run/memory_estimate.h"
#include "train/run/task_setup.h"
#include "train/run/train_step.h"

namespace heed::train {
namespace {

// Rank 0 reads the data first, writing what it builds (a vocabulary, token caches) into
// output_dir; the other ranks then read those rather than write the same files at once.
TaskData build_data(const RunConfig& c, const World& world, const Log& log) {
  if (world.is_main()) {
    TaskData data = build_task_data(c, log);
    world.barrier();
    return data;
  }
  world.barrier();
  return build_task_data(with_written_vocabulary(c), log);
}

void build_optimizer(RunParts& run) {
  const RunConfig& c = run.config;
  run.optimizer = make_optimizer(c.optim, *run.model);
  std::string schedule = std::string(to_string(c.schedule.name));
  if (schedule == "constant" && c.schedule.warmup_steps > 0) schedule = "constant_with_warmup";
  run.scheduler = std::make_unique<optim::LRScheduler>(
      *run.optimizer, optim::make_schedule(schedule, c.schedule.warmup_steps, c.train.max_steps));
}

}  // namespace

RunParts::RunParts(const RunConfig& c, const World& w)
    : config(c),
      task(task_for(c.task.name)),
      world(w),
      console(c.logging.progress, c.logging.every_steps, !w.is_main()),
      log([this](const std::string& line) { console.say(line); }) {}

void set_up_run(RunParts& run) {
  const RunConfig& c = run.config;
  check_world(run.world, c);
  if (run.world.is_main()) run.output_dir_lock = claim_output_dir(c, run.log);
  set_up_compute(c, run.log);
  run.data = build_data(c, run.world, run.log);
  check_same_inputs(run.world, run_input_files(c));
  // With LoRA the trainable count is known once the adapters are attached (building the model
  // costs its weights, not the optimizer state or the activations the check is about).
  if (run.world.is_main() && !c.lora.enabled()) check_memory(c, run.data, run.log);
  warn_of_oversubscription(c, World::ranks_on_this_machine(), run.log);
  run.model = build_model(c, run.data, run.log);
  run.model->set_gradient_checkpointing(c.train.gradient_checkpointing);
  if (run.world.is_main() && c.lora.enabled()) {
    double trainable = 0;
    for (const auto& [name, p] : nn::trainable_parameters(*run.model)) trainable += p.numel();
    check_memory(c, run.data, run.log, trainable);
  }
  if (c.eval.load_best_model_at_end) {
    run.best.emplace(best_model_for(c, run.task, run.data.labels));
  }
  build_optimizer(run);
  if (run.world.distributed()) {
    run.parallel = std::make_unique<DataParallel>(run.world, *run.model, *run.optimizer, c.train);
    run.log(run.parallel->describe(c.train));
  }
  run.loader = std::make_unique<data::Loader>(
      run.data.train, run.data.collate,
      data::LoaderOptions{.batch_size = static_cast<size_t>(c.train.batch_size),
                          .shuffle = c.data.shuffle,
                          .group_by_length = c.data.group_by_length,
                          .seed = static_cast<uint64_t>(c.train.seed),
                          .prefetch = static_cast<size_t>(c.data.prefetch)});
}

void start_data_parallel(RunParts& run, const std::optional<TrainingState>& resumed) {
  if (!run.parallel) return;
  run.parallel->broadcast_parameters();
  if (!resumed) {
    run.parallel->seed_dropout(run.model->dropout_generator->state(), {});
  } else {
    run.parallel->seed_dropout(resumed->dropout_rng, resumed->rank_dropout_offsets);
  }
}

}  // namespace heed::train
