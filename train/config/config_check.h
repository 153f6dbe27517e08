#pragma once
// The value checks of a RunConfig, for the config's own checks (config_validate.cpp) and the
// tasks' (TrainingTask::check): each failure is one line naming where the key was set.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "train/config/config_origins.h"
#include "train/config/did_you_mean.h"

namespace heed::train {

class Checker {
 public:
  explicit Checker(const Origins& origins) : origins_(origins) {}

  template <typename... Args>
  void check(bool ok, std::string_view key, fmt::format_string<Args...> format, Args&&... args) {
    if (!ok) {
      config_fail(origins_.where(key), "{}: {}", key,
                  fmt::format(format, std::forward<Args>(args)...));
    }
  }

  void at_least(std::string_view key, int64_t value, int64_t min) {
    check(value >= min, key, "must be at least {}, got {}", min, value);
  }
  void at_least(std::string_view key, const std::optional<int64_t>& value, int64_t min) {
    if (value) at_least(key, *value, min);
  }
  void positive(std::string_view key, double value) {
    check(value > 0, key, "must be > 0, got {}", value);
  }
  void non_negative(std::string_view key, double value) {
    check(value >= 0, key, "must be >= 0, got {}", value);
  }
  // Dropout rates and the like: 1 would zero everything.
  void unit_interval(std::string_view key, double value) {
    check(value >= 0 && value < 1, key, "must be in [0, 1), got {}", value);
  }
  void one_of(std::string_view key, const std::string& value, const std::vector<std::string>& names,
              std::string_view what) {
    if (std::ranges::count(names, value)) return;
    check(false, key, "{}", unknown_name(what, value, names));
  }
  void divides(std::string_view heads_key, int64_t heads, std::string_view size_key, int64_t size) {
    check(size % heads == 0, heads_key, "{} does not divide {} {}", heads, size_key, size);
  }
  void token_id(std::string_view key, const std::optional<int64_t>& id,
                const std::optional<int64_t>& vocab_size) {
    if (!id) return;
    at_least(key, *id, 0);
    if (vocab_size) {
      check(*id < *vocab_size, key, "{} is outside model.vocab_size {}", *id, *vocab_size);
    }
  }
  void file_exists(std::string_view key, const std::string& path, std::string_view hint = "") {
    check(std::filesystem::exists(path), key, "file '{}' does not exist{}", path, hint);
    check(!std::filesystem::is_directory(path), key, "'{}' is a directory, not a file", path);
  }
  void directory_exists(std::string_view key, const std::string& path) {
    check(std::filesystem::exists(path), key, "directory '{}' does not exist", path);
    check(std::filesystem::is_directory(path), key, "'{}' is not a directory", path);
  }

 private:
  const Origins& origins_;
};

// The longest sequence the model can place, and the key that says so.
std::pair<int64_t, std::string_view> position_limit(const ModelConfig& model);

// That the files and directories the config names exist (init_from unless
// checks.init_from_written_later). Last: the cheap checks should not wait on the file system.
void check_files(const RunConfig& config, const ConfigChecks& checks);

}  // namespace heed::train
