#include "train/checkpoint/output_dir.h"

#include <fmt/ranges.h>

#include <filesystem>
#include <optional>
#include <set>

#include "io/atomic_file.h"
#include "train/checkpoint/training_checkpoint.h"

namespace heed::train {
namespace {

namespace fs = std::filesystem;

// Every run takes output_dir/.lock before it writes anything there, so a directory that holds
// one (or a run's files, from before the lock existed) is a heed run's.
bool holds_a_run(const fs::path& dir) {
  return fs::exists(fs::symlink_status(dir / ".lock")) || fs::exists(dir / "run_info.json") ||
         !earlier_run_files(dir.string()).empty();
}

// What `dir` holds besides the run's own inputs that the config places there (its config file,
// a vocabulary trained earlier, a data file): names, sorted.
std::vector<std::string> foreign_entries(const fs::path& dir, const RunConfig& c) {
  std::set<fs::path> inputs;
  for (const std::optional<std::string>& input :
       {c.tokenizer.vocab, std::optional(c.data.train), c.data.valid, c.data.test, c.init_from,
        std::optional(c.origins.file)}) {
    if (input) inputs.insert(fs::weakly_canonical(*input));
  }
  std::vector<std::string> out;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (!inputs.count(fs::weakly_canonical(entry.path()))) {
      out.push_back(entry.path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Refuses a filesystem root, a file, and a directory of other things than a heed run: a run
// there would scatter its files among the user's, and overwrite_output_dir would remove some.
void check_place(const RunConfig& c) {
  const std::string& dir = c.train.output_dir;
  const fs::path resolved = fs::weakly_canonical(fs::absolute(dir));
  if (resolved == resolved.root_path()) {
    throw ConfigError(fmt::format(
        "train.output_dir: '{}' is the filesystem's root; choose a directory for the run", dir));
  }
  if (!fs::exists(resolved)) return;
  if (!fs::is_directory(resolved)) {
    throw ConfigError(fmt::format(
        "train.output_dir: '{}' is a file, not a directory; choose a directory for the run", dir));
  }
  if (c.train.overwrite_output_dir || holds_a_run(resolved)) return;
  std::vector<std::string> foreign = foreign_entries(resolved, c);
  if (foreign.empty()) return;
  const size_t shown = std::min<size_t>(foreign.size(), 5);
  throw ConfigError(fmt::format(
      "train.output_dir: '{}' already holds files that are not a heed run's ({}{}); choose a new "
      "or empty directory, or set train.overwrite_output_dir=true to write beside them (heed "
      "removes only its own files)",
      dir, fmt::join(foreign.begin(), foreign.begin() + static_cast<long>(shown), ", "),
      foreign.size() > shown ? fmt::format(" and {} more", foreign.size() - shown) : ""));
}

}  // namespace

io::DirectoryLock claim_output_dir(const RunConfig& c, const Log& log) {
  const std::string& dir = c.train.output_dir;
  check_place(c);
  fs::create_directories(dir);
  std::string holder;
  std::optional<io::DirectoryLock> lock = io::DirectoryLock::try_lock(dir, &holder);
  if (!lock) {
    throw ConfigError(fmt::format(
        "train.output_dir: '{}' is in use by {}, another run writing there; wait for it to "
        "end, or choose another directory",
        dir, holder));
  }
  // What writers killed mid-write left: no process of theirs can finish those files now.
  if (const std::vector<std::string> stale = io::remove_stale_temporaries(dir); !stale.empty()) {
    log(fmt::format("removed {} left by a write that was cut short", fmt::join(stale, ", ")));
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
