#pragma once
// The checks made while a config loads, and the one-line error they throw, which names where
// the key was set (Origins, in config.h).
#include <fmt/format.h>

#include <string>
#include <string_view>

#include "train/config/config.h"

namespace heed::train {

// Throws the one-line ConfigError "where: message".
template <typename... Args>
[[noreturn]] void config_fail(const std::string& where, fmt::format_string<Args...> format,
                              Args&&... args) {
  throw ConfigError(where + ": " + fmt::format(format, std::forward<Args>(args)...));
}

// Checks the values of a config whose types and keys are already right, and whose origins are
// set: each key's rule, and the checks between keys that do not depend on the task (those are
// TrainingTask::check). Not the files it names: check_files (config_check.h).
void validate(const RunConfig& config);

}  // namespace heed::train
