#pragma once
// report.html beside metrics.jsonl: a run's curves, config, model, machine, progress and
// results, drawn by viz/report.html from what the output directory holds (metrics.jsonl,
// final_metrics.json, and run_info.json and examples.txt, which the trainer writes for it).
// The trainer rewrites it at every evaluation and checkpoint and at the end; the `report`
// program draws any runs' directories, on the same axes.
#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nn/models/pretrained.h"
#include "train/config/config.h"
#include "train/tasks/task_data.h"

namespace heed::train {

// Called with a warning about a run's files that does not stop the report (lines skipped).
using ReportWarn = std::function<void(const std::string&)>;

// The data viz/report.html draws for one run's output directory ("runs" holds one or more).
// `status` is "running", "finished" or "stopped"; unset, it is judged from the directory: a
// run that holds its lock is running, one with final_metrics.json finished, any other stopped.
// Reads only: it never locks or writes the run. A metrics.jsonl line that is not a record is
// skipped and counted in one warning; a file of the run that is unreadable, or a directory, is
// an error naming it. Long runs' training records are thinned to 20,000 ("records_thinned" then
// says every how many were kept, of how many).
nlohmann::json run_report_data(const std::string& output_dir,
                               std::optional<std::string> status = std::nullopt,
                               const ReportWarn& warn = nullptr);
// The page's data for several runs; `title` heads it.
nlohmann::json report_data(const std::vector<nlohmann::json>& runs, const std::string& title);

// The trainer's report: run_info.json once the model is built, report.html as it goes.
class RunReport {
 public:
  RunReport(const RunConfig& config, const nn::PretrainedModel& model, Log log);
  // Rewrites output_dir/report.html. A report that cannot be written (a full disk) is a warning,
  // never the end of the run: the checkpoints matter more. While running, the page learns by
  // when the trainer will have rewritten it (stale_after_seconds): a page not rewritten by then
  // belongs to a run that was killed, and says so rather than "running" for ever.
  void write(const std::string& status) const;
  // The end-of-run examples, kept in examples.txt for the report.
  void set_examples(const std::string& examples) const;

 private:
  // Seconds after a write by which the next write is due, with a wide margin; null while the
  // run's pace is not known yet.
  nlohmann::json stale_after(const nlohmann::json& progress) const;

  std::string output_dir_;
  Log log_;
  // The steps at which the trainer rewrites the page: evaluations, checkpoints, the last.
  int64_t eval_every_ = 0, checkpoint_every_ = 0, max_steps_ = 0;
};

}  // namespace heed::train
