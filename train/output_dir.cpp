#include "train/output_dir.h"

#include <fmt/ranges.h>

#include <filesystem>
#include <optional>

#include "train/training_checkpoint.h"

namespace heed::train {

io::DirectoryLock claim_output_dir(const RunConfig& c, const Log& log) {
  namespace fs = std::filesystem;
  const std::string& dir = c.train.output_dir;
  fs::create_directories(dir);
  std::string holder;
  std::optional<io::DirectoryLock> lock = io::DirectoryLock::try_lock(dir, &holder);
  if (!lock) {
    throw ConfigError(fmt::format(
        "train.output_dir: '{}' is in use by {}, another run writing there; wait for it to "
        "end, or choose another directory",
        dir, holder));
  }
  const std::vector<std::string> earlier = earlier_run_files(dir);
  if (c.train.resume == Resume::kNever && !earlier.empty()) {
    if (!c.train.overwrite_output_dir) {
      throw ConfigError(
          fmt::format("train.output_dir: '{}' already holds an earlier run ({}); continue it with "
                      "--resume, replace it with --set train.overwrite_output_dir=true, or choose "
                      "another directory",
                      dir, fmt::join(earlier, ", ")));
    }
    // The token caches and a vocabulary built there stay: they depend on the data and the
    // tokenizer, not on the run.
    for (const std::string& name : earlier) fs::remove_all(fs::path(dir) / name);
    log(fmt::format("train.overwrite_output_dir: removed {} from {}", fmt::join(earlier, ", "),
                    dir));
  }
  return std::move(*lock);
}

}  // namespace heed::train
