#include "train/config/resume_changes.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "io/text_file.h"
#include "train/config/config_origins.h"

namespace heed::train {
namespace {

// dotted key -> value of a config as to_yaml writes it: one "key: value" per line, two spaces
// of indentation per section, a section's line ending in ':'.
std::map<std::string, std::string> flatten(std::string_view yaml) {
  std::map<std::string, std::string> out;
  std::vector<std::string> sections;
  std::istringstream in{std::string(yaml)};
  std::string line;
  while (std::getline(in, line)) {
    const size_t indent = line.find_first_not_of(' ');
    const size_t colon = line.find(':');
    if (indent == std::string::npos || colon == std::string::npos) continue;
    sections.resize(std::min(sections.size(), indent / 2));
    const std::string key = line.substr(indent, colon - indent);
    std::string dotted;
    for (const std::string& s : sections) dotted += s + ".";
    dotted += key;
    if (colon + 1 == line.size()) {
      sections.push_back(key);
    } else {
      out[dotted] = line.substr(colon + 2);
    }
  }
  return out;
}

constexpr std::array kApplied{"optim.lr",
                              "train.max_steps",
                              "train.threads",
                              "train.dtype",
                              "train.max_grad_norm",
                              "train.check_memory",
                              "train.bucket_mb",
                              "train.zero_stage",
                              "train.eval_at_end",
                              "train.output_dir",
                              "data.valid",
                              "data.test",
                              "data.prefetch",
                              "eval.every_steps",
                              "eval.max_batches",
                              "eval.batch_size",
                              "eval.decode",
                              "checkpoint.every_steps",
                              "checkpoint.keep_last",
                              "logging.every_steps",
                              "logging.progress",
                              "generation.num_beams",
                              "generation.max_new_tokens"};

// Where and how fast a run ran, and how it logged: what a finished run made is the same.
constexpr std::array kNotInWhatItMade{
    "train.output_dir",    "train.threads",    "train.check_memory",  "data.prefetch",
    "logging.every_steps", "logging.progress", "checkpoint.keep_last"};

// How this part of the run was started, not what it is: never a change.
const std::set<std::string> kHowItStarted{"train.resume", "train.overwrite_output_dir"};

}  // namespace

std::vector<ConfigChange> config_changes(std::string_view saved_yaml,
                                         std::string_view current_yaml) {
  const std::map<std::string, std::string> was = flatten(saved_yaml), now = flatten(current_yaml);
  std::vector<ConfigChange> changes;
  for (const auto& [key, value] : now) {
    if (kHowItStarted.count(key)) continue;
    const auto it = was.find(key);
    const std::string before = it == was.end() ? "absent" : it->second;
    if (before != value) changes.push_back({key, before, value});
  }
  for (const auto& [key, value] : was) {
    if (!now.count(key) && !kHowItStarted.count(key)) changes.push_back({key, value, "absent"});
  }
  return changes;
}

bool applies_on_resume(std::string_view key) {
  return std::ranges::find(kApplied, key) != kApplied.end();
}

bool changes_what_a_run_made(std::string_view key) {
  return std::ranges::find(kNotInWhatItMade, key) == kNotInWhatItMade.end();
}

void check_resume_changes(const std::string& checkpoint_dir, const RunConfig& c, const Log& log) {
  const std::filesystem::path saved = std::filesystem::path(checkpoint_dir) / "run_config.yaml";
  if (!std::filesystem::exists(saved)) return;  // written before checkpoints recorded it
  std::vector<std::string> applied;
  for (const ConfigChange& change :
       config_changes(io::read_text_file(saved.string()), to_yaml(c))) {
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
