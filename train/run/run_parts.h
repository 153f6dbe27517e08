#pragma once
// What a run is made of once it is set up (run_setup.h), and how far it has got: the pieces of
// the run (resume and checkpoints, step logging, evaluations, the end) each take these.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "data/loader.h"
#include "io/directory_lock.h"
#include "nn/models/pretrained.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"
#include "train/config/config.h"
#include "train/distributed/data_parallel.h"
#include "train/distributed/world.h"
#include "train/reporting/console.h"
#include "train/reporting/run_report.h"
#include "train/run/best_model.h"
#include "train/tasks/task.h"
#include "train/tasks/task_data.h"

namespace heed::train {

// Members in the order they are built; destroyed the other way round, so data parallelism (its
// hooks on the parameters and the optimizer) goes before the model and the optimizer do.
struct RunParts {
  RunParts(const RunConfig& config, const World& world);
  RunParts(const RunParts&) = delete;  // `log` calls into its own console
  RunParts& operator=(const RunParts&) = delete;

  RunConfig config;
  const TrainingTask& task;
  const World& world;
  Console console;
  Log log;                                           // console.say
  std::optional<io::DirectoryLock> output_dir_lock;  // rank 0's
  TaskData data;
  std::shared_ptr<nn::PretrainedModel> model;
  std::unique_ptr<optim::Optimizer> optimizer;
  std::unique_ptr<optim::LRScheduler> scheduler;
  std::unique_ptr<DataParallel> parallel;  // with more than one rank
  std::unique_ptr<data::Loader> loader;
  std::optional<BestModel> best;    // with eval.load_best_model_at_end
  std::optional<RunReport> report;  // report.html, rank 0's, from the model's build on

  void write_report(const std::string& status) const {
    if (report) report->write(status);
  }
};

// How far the run has got, and since when.
struct RunProgress {
  using Clock = std::chrono::steady_clock;

  int64_t step = 0;
  int64_t first_step = 0;  // where this process started (a resume's step)
  int64_t tokens_seen = 0;
  double elapsed_before = 0.0;  // the seconds of the runs it continues
  Clock::time_point start = Clock::now();
  std::string resumed_from;            // the checkpoint this run continued, if any
  std::optional<int64_t> loaded_step;  // the best model's step, once loaded at the end
  // The last step's evaluation of data.valid, when the best model's choice judged it.
  std::optional<std::map<std::string, double>> last_valid;

  double elapsed() const {
    return elapsed_before + std::chrono::duration<double>(Clock::now() - start).count();
  }
};

}  // namespace heed::train
