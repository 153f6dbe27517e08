#include "train/training_checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "autograd/error.h"
#include "io/atomic_file.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;
constexpr const char* kPrefix = "checkpoint-";

// checkpoint-STEP directories of `dir`, oldest first.
std::vector<std::pair<int64_t, fs::path>> checkpoints(const fs::path& dir) {
  std::vector<std::pair<int64_t, fs::path>> out;
  if (!fs::exists(dir)) return out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.rfind(kPrefix, 0) != 0) continue;
    const std::string digits = name.substr(std::string(kPrefix).size());
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit)) continue;
    out.emplace_back(std::stoll(digits), entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<std::string> earlier_run_files(const std::string& output_dir) {
  std::vector<std::string> out;
  if (!fs::is_directory(output_dir)) return out;
  for (const auto& entry : fs::directory_iterator(output_dir)) {
    const std::string name = entry.path().filename().string();
    const bool checkpoint =
        entry.is_directory() &&
        (name.rfind(kPrefix, 0) == 0 || name.rfind(std::string(".tmp-") + kPrefix, 0) == 0);
    if (checkpoint || name == "metrics.jsonl" || name == "final_metrics.json") out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

nlohmann::json data_order(const RunConfig& c) {
  return {{"train.batch_size", c.train.batch_size},
          {"train.grad_accum_steps", c.train.grad_accum_steps},
          {"train.seed", c.train.seed},
          {"data.shuffle", c.data.shuffle},
          {"data.group_by_length", c.data.group_by_length},
          {"data.max_train_samples", c.data.max_train_samples.value_or(0)}};
}

std::string checkpoint_path(const std::string& output_dir, int64_t step) {
  return (fs::path(output_dir) / (kPrefix + std::to_string(step))).string();
}

std::string write_checkpoint(const std::string& output_dir, int64_t step, int64_t keep_last,
                             const std::function<void(const std::string&)>& write_files,
                             std::optional<int64_t> also_keep) {
  const fs::path dir(output_dir);
  fs::create_directories(dir);
  const fs::path final_path = checkpoint_path(output_dir, step);
  const fs::path tmp = dir / (".tmp-" + std::string(kPrefix) + std::to_string(step));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  write_files(tmp.string());
  for (const auto& entry : fs::directory_iterator(tmp)) io::fsync_path(entry.path().string());
  io::fsync_path(tmp.string());
  // A checkpoint of this step from an earlier, interrupted run is replaced.
  if (fs::exists(final_path)) fs::remove_all(final_path);
  fs::rename(tmp, final_path);
  io::fsync_path(dir.string());
  auto all = checkpoints(dir);
  for (size_t i = 0; i + static_cast<size_t>(keep_last) < all.size(); ++i) {
    if (all[i].first != also_keep) fs::remove_all(all[i].second);
  }
  return final_path.string();
}

std::optional<std::string> latest_checkpoint(const std::string& output_dir) {
  auto all = checkpoints(output_dir);
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (fs::exists(it->second / "trainer_state.json")) return it->second.string();
  }
  return std::nullopt;
}

}  // namespace heed::train
