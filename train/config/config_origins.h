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

// Checks the values of a config whose types and keys are already right: ranges, names,
// combinations, and that the files it names exist.
void validate(const RunConfig& config, const Origins& origins, const ConfigChecks& checks = {});

}  // namespace heed::train
