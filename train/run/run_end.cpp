#include "train/run/run_end.h"

#include <filesystem>

#include "autograd/grad_mode.h"
#include "base/profile.h"
#include "io/json_file.h"
#include "nn/pretrained_io.h"
#include "train/checkpoint/training_checkpoint.h"
#include "train/reporting/metrics_log.h"
#include "train/run/evaluation.h"
#include "train/run/lora_run.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;

// Loads the best checkpoint's weights unless the last step's are the best; returns the
// directory of the model now in memory (`result_checkpoint` when none was judged).
std::string load_best_model(RunParts& run, RunProgress& progress,
                            const std::string& result_checkpoint) {
  const BestModel& best = *run.best;
  if (!best.has_value()) return result_checkpoint;  // no evaluation judged (nothing was left)
  const std::string dir = checkpoint_path(run.config.train.output_dir, best.step());
  const std::string judged = fmt::format("valid {} {:.6g}", best.metric(), best.value());
  if (best.step() == progress.step) {
    run.log(fmt::format("the best model is the last one ({})", judged));
    return dir;
  }
  nn::load_weights(*run.model, io::SafetensorsFile(dir + "/model.safetensors"));
  load_lora_weights(run.config, *run.model, dir);
  progress.loaded_step = best.step();
  run.log(fmt::format("loaded the best model, {} ({}), for the final evaluation", dir, judged));
  return dir;
}

void final_evaluations(RunParts& run, const RunProgress& progress, SplitMetrics& final_metrics) {
  if (!run.config.train.eval_at_end) return;
  const TaskData& data = run.data;
  if (data.valid && !progress.loaded_step && progress.last_valid) {
    final_metrics["valid"] = *progress.last_valid;  // evaluated in the loop, and logged
  } else if (data.valid) {
    final_metrics["valid"] = evaluate_and_log(run, progress, "valid", data.valid);
  }
  if (data.test) final_metrics["test"] = evaluate_and_log(run, progress, "test", data.test);
}

void write_final_metrics(const RunParts& run, const RunProgress& progress,
                         const SplitMetrics& final_metrics, const std::string& model_checkpoint) {
  nlohmann::json j = {{"step", progress.step},
                      {"tokens_seen", progress.tokens_seen},
                      {"elapsed_seconds", progress.elapsed()},
                      {"checkpoint", model_checkpoint}};
  if (run.best) {
    j.update(run.best->state());
    j["best_model_checkpoint"] = model_checkpoint;
  }
  for (auto& [split, m] : final_metrics) j[split] = m;
  io::write_json_file((fs::path(run.config.train.output_dir) / "final_metrics.json").string(), j);
}

void show_examples(RunParts& run) {
  NoGradGuard no_grad;
  run.model->eval();
  const std::string examples = run.task.end_of_run_examples(*run.model, run.data, run.config);
  if (examples.empty()) return;
  run.log(examples);
  run.report->set_examples(examples);
}

}  // namespace

Metrics evaluate_and_log(RunParts& run, const RunProgress& progress, const std::string& name,
                         const std::shared_ptr<const data::Dataset>& split) {
  Metrics m = evaluate(run.task, *run.model, run.data, split, run.config);
  run.model->train();
  nlohmann::json j = {{"step", progress.step}, {"split", name}};
  std::string line = fmt::format("eval {} at step {}:", name, progress.step);
  if (progress.loaded_step) {  // the best model, loaded at the end
    j["model_step"] = *progress.loaded_step;
    line = fmt::format("eval {} at step {} (the model of step {}):", name, progress.step,
                       *progress.loaded_step);
  }
  for (auto& [k, v] : m) {
    j[k] = v;
    line += fmt::format(" {} {:.4f}", k, v);
  }
  append_metrics_record(run.config.train.output_dir, j);
  run.log(line);
  run.write_report("running");
  return m;
}

std::string finish_run_on_main(RunParts& run, RunProgress& progress,
                               const std::string& last_checkpoint, SplitMetrics& final_metrics) {
  std::string model_checkpoint = last_checkpoint;
  if (run.best) model_checkpoint = load_best_model(run, progress, model_checkpoint);
  final_evaluations(run, progress, final_metrics);
  write_final_metrics(run, progress, final_metrics, model_checkpoint);
  show_examples(run);
  run.write_report("finished");
  run.log(fmt::format("done: {} steps in {}; model in {}", progress.step,
                      duration(progress.elapsed()), model_checkpoint));
  if (profiling()) run.log("time per op over the run (HEED_PROFILE):\n" + op_time_report());
  return model_checkpoint;
}

}  // namespace heed::train
