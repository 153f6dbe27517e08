#include "train/config/resume_changes.h"

#include <fmt/ranges.h>

#include <filesystem>
#include <map>

#include "train/config/config_origins.h"
#include "train/config/config_schema.h"

namespace heed::train {
namespace {

// dotted key -> value as to_yaml writes it, of the keys that say what the run is.
std::map<std::string, std::string> values_of(const RunConfig& config) {
  std::map<std::string, std::string> out;
  for (KeyValue& kv : config_values(config)) {
    if (kv.row.resume != OnResume::kHowStarted) out[kv.key] = std::move(kv.value);
  }
  return out;
}

}  // namespace

std::vector<ConfigChange> config_changes(const RunConfig& saved, const RunConfig& current) {
  const std::map<std::string, std::string> was = values_of(saved), now = values_of(current);
  std::vector<ConfigChange> changes;
  for (const auto& [key, value] : now) {
    const auto it = was.find(key);
    const std::string before = it == was.end() ? "absent" : it->second;
    if (before != value) changes.push_back({key, before, value});
  }
  for (const auto& [key, value] : was) {
    if (!now.count(key)) changes.push_back({key, value, "absent"});
  }
  return changes;
}

bool applies_on_resume(std::string_view key) {
  const OnResume resume = row_of(key).resume;
  return resume == OnResume::kApplies || resume == OnResume::kAppliesNotMade;
}

bool changes_what_a_run_made(std::string_view key) {
  const OnResume resume = row_of(key).resume;
  return resume == OnResume::kFixed || resume == OnResume::kApplies;
}

void check_resume_changes(const std::string& checkpoint_dir, const RunConfig& c,
                          const std::function<void(const std::string&)>& log) {
  const std::filesystem::path saved = std::filesystem::path(checkpoint_dir) / "run_config.yaml";
  if (!std::filesystem::exists(saved)) return;  // written before checkpoints recorded it
  std::vector<std::string> applied;
  for (const ConfigChange& change : config_changes(read_config_as_written(saved.string()), c)) {
    if (!applies_on_resume(change.key)) {
      config_fail(c.origins.where(change.key),
                  "{}: is {} but was {} in {}; it shaped what the run has learnt so far, so a "
                  "resumed run cannot change it (set it back, or start a new train.output_dir)",
                  change.key, change.now, change.was, saved.string());
    }
    applied.push_back(fmt::format("{} {} -> {}", change.key, change.was, change.now));
  }
  if (!applied.empty()) {
    log(fmt::format("resume: changed since {}: {}", checkpoint_dir, fmt::join(applied, ", ")));
  }
}

}  // namespace heed::train
