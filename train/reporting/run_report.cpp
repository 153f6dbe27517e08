#include "train/reporting/run_report.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <type_traits>

#include "autograd/ops.h"
#include "base/error.h"
#include "io/atomic_file.h"
#include "io/directory_lock.h"
#include "io/json_file.h"
#include "io/text_file.h"
#include "viz/page.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kRunInfo = "run_info.json";
constexpr const char* kExamples = "examples.txt";

// The CPU's name as /proc/cpuinfo gives it ("AMD EPYC"), or "unknown".
std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
  }
  return "unknown";
}

// Why a metrics.jsonl record cannot be drawn, if it cannot: the page reads "step" as a number
// and "split" as a name.
std::optional<std::string> record_problem(const json& record) {
  if (!record.is_object()) return "not a JSON object";
  const auto step = record.find("step");
  if (step == record.end()) return "no 'step'";
  if (!step->is_number_integer() || step->get<int64_t>() < 0) {
    return fmt::format("'step' is {}, not a step number", step->dump());
  }
  const auto split = record.find("split");
  if (split != record.end() && !split->is_string()) {
    return fmt::format("'split' is {}, not a name", split->dump());
  }
  return std::nullopt;
}

// The training records of a long run, thinned for drawing: a page of a million records is more
// than a browser opens. Every k-th is kept, and the last; metrics.jsonl keeps them all.
constexpr size_t kMaxTrainingRecordsDrawn = 20000;

json thinned(std::vector<json> training, std::vector<json> evaluations, json* note) {
  json records = json::array();
  const size_t every = (training.size() + kMaxTrainingRecordsDrawn - 1) / kMaxTrainingRecordsDrawn;
  if (every > 1) *note = {{"every", every}, {"of", training.size()}};
  for (size_t i = 0; i < training.size(); ++i) {
    if (every <= 1 || i % every == 0 || i + 1 == training.size()) {
      records.push_back(std::move(training[i]));
    }
  }
  for (json& e : evaluations) records.push_back(std::move(e));
  return records;
}

// metrics.jsonl's records. A run killed mid-append can leave a last line cut short, which is
// left out (the trainer cuts it off when it resumes); any other line that is not a record is
// skipped and counted in a warning that names the file and its first such line.
json read_records(const fs::path& path, const ReportWarn& warn, json* thinning) {
  if (!fs::exists(path)) return json::array();
  io::check_not_a_directory(path.string());
  std::ifstream in(path);
  HEED_CHECK(in.good(), "{}: cannot read it", path.string());
  std::vector<json> training, evaluations;
  std::string line, first_problem;
  size_t line_number = 0, skipped = 0;
  while (std::getline(in, line)) {
    ++line_number;
    const bool cut_short = in.eof();  // the last line, without its newline
    json record = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (cut_short && record.is_discarded()) break;
    if (const std::optional<std::string> problem = record_problem(record)) {
      if (skipped++ == 0) first_problem = fmt::format("line {}: {}", line_number, *problem);
      continue;
    }
    (record.contains("split") ? evaluations : training).push_back(std::move(record));
  }
  if (skipped > 0 && warn) {
    warn(fmt::format("{}: skipped {} line{} that {} not a metrics record (first: {})",
                     path.string(), skipped, skipped == 1 ? "" : "s", skipped == 1 ? "is" : "are",
                     first_problem));
  }
  return thinned(std::move(training), std::move(evaluations), thinning);
}

// A JSON file of the run that may be absent; present, it must be a readable object.
json optional_json_file(const fs::path& path) {
  if (!fs::exists(path)) return nullptr;
  json j = io::read_json_file(path.string());
  HEED_CHECK(j.is_object(), "{}: expected a JSON object, got {}", path.string(), j.type_name());
  return j;
}

// Tests the run's lock without taking it: a report never stops a run from starting.
std::string judged_status(const fs::path& dir) {
  if (io::DirectoryLock::holder(dir.string())) return "running";
  return fs::exists(dir / "final_metrics.json") ? "finished" : "stopped";
}

// Where the run is: its last step and time, and while it runs, the time left at its pace so
// far (this process's steps only would be better, but the records do not say which they are).
json progress(const json& records, const json& info, const json& final, const std::string& status) {
  // A field of the kind the fallback is (an integer step, a number of seconds), else the
  // fallback: final_metrics.json is read as found, and 1e300 is no step.
  const auto number_or = [](const json& object, const char* key, auto fallback) {
    using T = decltype(fallback);
    const auto it = object.find(key);
    const bool fits =
        it != object.end() && (std::is_integral_v<T> ? it->is_number_integer() : it->is_number());
    return fits ? it->get<T>() : fallback;
  };
  int64_t step = 0;
  double elapsed = 0.0;
  for (const json& r : records) {
    if (r.contains("split")) continue;
    step = r.at("step").get<int64_t>();  // checked by record_problem
    elapsed = number_or(r, "elapsed_seconds", 0.0);
  }
  if (final.is_object()) {
    step = number_or(final, "step", step);
    elapsed = number_or(final, "elapsed_seconds", elapsed);
  }
  const json max_steps = info.is_object() ? info.value("max_steps", json(nullptr)) : json(nullptr);
  json remaining = nullptr;
  if (status == "running" && step > 0 && max_steps.is_number_integer()) {
    remaining = elapsed / static_cast<double>(step) *
                static_cast<double>(std::max<int64_t>(max_steps.get<int64_t>() - step, 0));
  }
  return {{"step", step},
          {"max_steps", max_steps},
          {"elapsed_seconds", elapsed},
          {"remaining_seconds", remaining}};
}

std::string now_utc() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

}  // namespace

json run_report_data(const std::string& output_dir, std::optional<std::string> status,
                     const ReportWarn& warn) {
  const fs::path dir(output_dir);
  HEED_CHECK(fs::exists(dir), "{}: no such run directory", output_dir);
  HEED_CHECK(fs::is_directory(dir), "{}: is a file, not a run directory (train.output_dir)",
             output_dir);
  HEED_CHECK(fs::exists(dir / "metrics.jsonl") || fs::exists(dir / kRunInfo),
             "{}: not a heed run (it holds neither metrics.jsonl nor {})", output_dir, kRunInfo);
  const json info = optional_json_file(dir / kRunInfo);
  const json final = optional_json_file(dir / "final_metrics.json");
  json thinning = nullptr;
  const json records = read_records(dir / "metrics.jsonl", warn, &thinning);
  const std::string state = status.value_or(judged_status(dir));
  const auto from_info = [&](const char* key, json fallback) {
    return info.is_object() ? info.value(key, fallback) : fallback;
  };
  const fs::path examples = dir / kExamples;
  return {{"name", output_dir},
          {"status", state},
          {"task", from_info("task", "")},
          {"config_yaml", from_info("config_yaml", "")},
          {"model", from_info("model", json::object())},
          {"machine", from_info("machine", json::object())},
          {"progress", progress(records, info, final, state)},
          {"records", records},
          {"records_thinned", thinning},
          {"final", final},
          {"examples", fs::exists(examples) ? io::read_text_file(examples.string()) : ""}};
}

json report_data(const std::vector<json>& runs, const std::string& title) {
  return {{"format", "heed-report/1"}, {"generated", now_utc()}, {"title", title}, {"runs", runs}};
}

RunReport::RunReport(const RunConfig& config, const nn::PretrainedModel& model, Log log)
    : output_dir_(config.train.output_dir),
      log_(std::move(log)),
      eval_every_(config.data.valid ? config.eval.every_steps : 0),
      checkpoint_every_(config.checkpoint.every_steps),
      max_steps_(config.train.max_steps) {
  const json info = {{"task", config.task.name},
                     {"config_yaml", to_yaml(config)},
                     {"max_steps", config.train.max_steps},
                     {"model",
                      {{"architecture", model.architecture()},
                       {"parameters", model.num_parameters()},
                       {"dtype", config.train.dtype == DType::bf16 ? "bf16" : "f32"}}},
                     {"machine", {{"cpu", cpu_name()}, {"threads", num_threads()}}}};
  try {
    io::write_json_file((fs::path(output_dir_) / kRunInfo).string(), info);
    fs::remove(fs::path(output_dir_) / kExamples);  // a resumed run's examples come at its end
  } catch (const std::exception& e) {
    log_(fmt::format("warning: the report's {} was not written: {}", kRunInfo, e.what()));
  }
}

json RunReport::stale_after(const json& progress) const {
  const int64_t step = progress.value("step", int64_t{0});
  const double elapsed = progress.value("elapsed_seconds", 0.0);
  if (step <= 0 || elapsed <= 0.0) return nullptr;
  int64_t next = max_steps_;
  for (const int64_t every : {eval_every_, checkpoint_every_}) {
    if (every > 0) next = std::min(next, (step / every + 1) * every);
  }
  const double due =
      static_cast<double>(std::max<int64_t>(next - step, 1)) * elapsed / static_cast<double>(step);
  // Three times the pace so far, and never under 10 minutes: a slow evaluation or a busy
  // machine must not make a live run look stopped.
  return std::max(600.0, 3.0 * due + 300.0);
}

void RunReport::write(const std::string& status) const {
  const std::string path = (fs::path(output_dir_) / "report.html").string();
  try {
    const auto warn = [this](const std::string& w) { log_("warning: " + w); };
    json run = run_report_data(output_dir_, status, warn);
    if (status == "running") run["stale_after_seconds"] = stale_after(run.at("progress"));
    const json data = report_data({run}, output_dir_);
    viz::write_page(path, viz::Page::report, data, {.refresh = status == "running"});
  } catch (const std::exception& e) {
    log_(fmt::format("warning: {} was not written: {}", path, e.what()));
  }
}

void RunReport::set_examples(const std::string& examples) const {
  try {
    io::write_file_atomically((fs::path(output_dir_) / kExamples).string(), examples);
  } catch (const std::exception& e) {
    log_(fmt::format("warning: {} was not written: {}", kExamples, e.what()));
  }
}

}  // namespace heed::train
