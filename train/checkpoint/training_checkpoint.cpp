#include "train/checkpoint/training_checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "base/error.h"
#include "io/atomic_file.h"
#include "io/json_file.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;
constexpr const char* kPrefix = "checkpoint-";
constexpr const char* kTmpPrefix = ".tmp-";         // being written
constexpr const char* kTrashPrefix = ".trash-";     // being deleted
constexpr const char* kSkippedPrefix = "skipped-";  // a resume found it damaged

// checkpoint-STEP directories of `dir`, oldest first.
std::vector<std::pair<int64_t, fs::path>> checkpoints(const fs::path& dir) {
  std::vector<std::pair<int64_t, fs::path>> out;
  if (!fs::exists(dir)) return out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.rfind(kPrefix, 0) != 0) continue;
    const std::string digits = name.substr(std::string(kPrefix).size());
    // More than 18 digits is no step of ours, and would overflow int64_t.
    if (digits.empty() || digits.size() > 18 ||
        !std::all_of(digits.begin(), digits.end(), ::isdigit)) {
      continue;
    }
    out.emplace_back(std::stoll(digits), entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Renames `path` out of the checkpoints' namespace, then deletes it: a kill in the middle of the
// deletion leaves a .trash- directory that no resume mistakes for a checkpoint, and that the
// next checkpoint's write removes.
void delete_checkpoint(const fs::path& path) {
  const fs::path trash = path.parent_path() / (kTrashPrefix + path.filename().string());
  fs::remove_all(trash);
  fs::rename(path, trash);
  io::fsync_path(path.parent_path().string());
  fs::remove_all(trash);
}

// Moves a checkpoint that a resume skipped out of the checkpoints' namespace, to
// skipped-checkpoint-STEP (-2, -3... when taken), with SKIPPED.txt saying why. Returns where.
fs::path set_aside(const fs::path& dir, const std::string& reason) {
  fs::path aside = dir.parent_path() / (kSkippedPrefix + dir.filename().string());
  for (int n = 2; fs::exists(aside); ++n) {
    aside = dir.parent_path() / fmt::format("{}{}-{}", kSkippedPrefix, dir.filename().string(), n);
  }
  fs::rename(dir, aside);
  io::fsync_path(dir.parent_path().string());
  std::error_code ec;  // the reason is a courtesy: a directory that cannot take it is still aside
  if (fs::is_directory(aside, ec)) {
    try {
      io::write_file_atomically((aside / "SKIPPED.txt").string(),
                                fmt::format("a resume skipped {}: {}\n", dir.string(), reason));
    } catch (const std::exception&) {
    }
  }
  return aside;
}

}  // namespace

std::optional<std::string> job_checkpoint(
    const World& world, const std::string& output_dir,
    const std::function<void(const std::string&)>& on_skipped) {
  std::string dir;
  if (world.is_main()) {
    remove_unfinished_checkpoints(output_dir);
    dir = latest_checkpoint(
              output_dir,
              [&](const std::string& skipped, const std::string& reason) {
                const fs::path aside = set_aside(skipped, reason);
                if (on_skipped) {
                  on_skipped(fmt::format("{}: damaged or incomplete ({}); moved to {}", skipped,
                                         reason, aside.filename().string()));
                }
              },
              CheckpointCheck::contents)
              .value_or("");
  }
  world.broadcast(dir);
  if (dir.empty()) return std::nullopt;
  return dir;
}

std::vector<std::string> earlier_run_files(const std::string& output_dir) {
  std::vector<std::string> out;
  if (!fs::is_directory(output_dir)) return out;
  for (const auto& entry : fs::directory_iterator(output_dir)) {
    const std::string name = entry.path().filename().string();
    const bool checkpoint =
        entry.is_directory() &&
        (name.rfind(kPrefix, 0) == 0 || name.rfind(std::string(kTmpPrefix) + kPrefix, 0) == 0 ||
         name.rfind(std::string(kTrashPrefix) + kPrefix, 0) == 0 ||
         name.rfind(std::string(kSkippedPrefix) + kPrefix, 0) == 0);
    if (checkpoint || name == "metrics.jsonl" || name == "final_metrics.json") out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void remove_unfinished_checkpoints(const std::string& output_dir) {
  if (!fs::is_directory(output_dir)) return;
  for (const auto& entry : fs::directory_iterator(output_dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(std::string(kTmpPrefix) + kPrefix, 0) == 0 ||
        name.rfind(std::string(kTrashPrefix) + kPrefix, 0) == 0) {
      fs::remove_all(entry.path());
    }
  }
}

std::string checkpoint_path(const std::string& output_dir, int64_t step) {
  return (fs::path(output_dir) / (kPrefix + std::to_string(step))).string();
}

std::string write_checkpoint(const std::string& output_dir, int64_t step, int64_t keep_last,
                             const std::function<void(const std::string&)>& write_files,
                             std::optional<int64_t> also_keep) {
  const fs::path dir(output_dir);
  fs::create_directories(dir);
  remove_unfinished_checkpoints(output_dir);
  const fs::path final_path = checkpoint_path(output_dir, step);
  const fs::path tmp = dir / (kTmpPrefix + std::string(kPrefix) + std::to_string(step));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  try {
    write_files(tmp.string());
    write_manifest(tmp.string(), step);
    io::fsync_path(tmp.string());
  } catch (...) {
    std::error_code ignored;  // freeing the space is all that is left to do; the error stands
    fs::remove_all(tmp, ignored);
    throw;
  }
  // A checkpoint of this step from an earlier, interrupted run is replaced.
  if (fs::exists(final_path)) delete_checkpoint(final_path);
  fs::rename(tmp, final_path);
  io::fsync_path(dir.string());
  // The older checkpoints go only once this one is known to be whole.
  if (std::optional<std::string> problem = checkpoint_problem(final_path.string())) {
    fail("{}: incomplete after writing: {}", final_path.string(), *problem);
  }
  // Only checkpoints that verify count: one that a resume would skip (a damaged newest, a stray
  // higher step) must not push this run's good ones out. The one just written always stays.
  std::vector<std::pair<int64_t, fs::path>> verified;
  for (const auto& [existing_step, path] : checkpoints(dir)) {
    if (path == final_path || !checkpoint_problem(path.string(), CheckpointCheck::sizes)) {
      verified.emplace_back(existing_step, path);
    }
  }
  for (size_t i = 0; i + static_cast<size_t>(keep_last) < verified.size(); ++i) {
    const auto& [old_step, path] = verified[i];
    if (path != final_path && old_step != also_keep) delete_checkpoint(path);
  }
  return final_path.string();
}

std::optional<std::string> latest_checkpoint(const std::string& output_dir,
                                             const OnSkippedCheckpoint& on_skipped,
                                             CheckpointCheck check) {
  auto all = checkpoints(output_dir);
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    const std::optional<std::string> problem = checkpoint_problem(it->second.string(), check);
    if (!problem) return it->second.string();
    if (on_skipped) on_skipped(it->second.string(), *problem);
  }
  return std::nullopt;
}

}  // namespace heed::train
