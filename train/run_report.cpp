#include "train/run_report.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "autograd/error.h"
#include "autograd/ops.h"
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

// metrics.jsonl's records. A run killed mid-append can leave a last line cut short, which is
// left out (the trainer cuts it off when it resumes).
json read_records(const fs::path& path) {
  json records = json::array();
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    json record = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_object()) records.push_back(std::move(record));
  }
  return records;
}

json optional_json_file(const fs::path& path) {
  return fs::exists(path) ? io::read_json_file(path.string()) : json(nullptr);
}

std::string judged_status(const fs::path& dir) {
  std::string holder;
  if (!io::DirectoryLock::try_lock(dir.string(), &holder)) return "running";
  return fs::exists(dir / "final_metrics.json") ? "finished" : "stopped";
}

// Where the run is: its last step and time, and while it runs, the time left at its pace so
// far (this process's steps only would be better, but the records do not say which they are).
json progress(const json& records, const json& info, const json& final, const std::string& status) {
  int64_t step = 0;
  double elapsed = 0.0;
  for (const json& r : records) {
    if (r.contains("split") || !r.contains("step")) continue;
    step = r.value("step", int64_t{0});
    elapsed = r.value("elapsed_seconds", 0.0);
  }
  if (final.is_object()) {
    step = final.value("step", step);
    elapsed = final.value("elapsed_seconds", elapsed);
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

json run_report_data(const std::string& output_dir, std::optional<std::string> status) {
  const fs::path dir(output_dir);
  HEED_CHECK(fs::is_directory(dir), "{}: no such run directory", output_dir);
  HEED_CHECK(fs::exists(dir / "metrics.jsonl") || fs::exists(dir / kRunInfo),
             "{}: not a heed run (it holds neither metrics.jsonl nor {})", output_dir, kRunInfo);
  const json info = optional_json_file(dir / kRunInfo);
  const json final = optional_json_file(dir / "final_metrics.json");
  const json records = read_records(dir / "metrics.jsonl");
  const std::string state = status.value_or(judged_status(dir));
  const auto from_info = [&](const char* key, json fallback) {
    return info.is_object() ? info.value(key, fallback) : fallback;
  };
  return {{"name", output_dir},
          {"status", state},
          {"task", from_info("task", "")},
          {"config_yaml", from_info("config_yaml", "")},
          {"model", from_info("model", json::object())},
          {"machine", from_info("machine", json::object())},
          {"progress", progress(records, info, final, state)},
          {"records", records},
          {"final", final},
          {"examples",
           fs::exists(dir / kExamples) ? io::read_text_file((dir / kExamples).string()) : ""}};
}

json report_data(const std::vector<json>& runs, const std::string& title) {
  return {{"format", "heed-report/1"}, {"generated", now_utc()}, {"title", title}, {"runs", runs}};
}

RunReport::RunReport(const RunConfig& config, const nn::PretrainedModel& model, Log log)
    : output_dir_(config.train.output_dir), log_(std::move(log)) {
  const json info = {{"task", std::string(to_string(config.task))},
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

void RunReport::write(const std::string& status) const {
  const std::string path = (fs::path(output_dir_) / "report.html").string();
  try {
    const json data = report_data({run_report_data(output_dir_, status)}, output_dir_);
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
